import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/api/app';
import type { QueryGate } from '../../../src/api/query-gate';
import type { AppContext } from '../../../src/shared/domain/context';
import { createTestContext, graphql, TestContext } from '../../support/harness';
import { abandonableGraphql } from '../../support/http-json';

/** Waits until `condition` holds (bounded, so a broken gate fails the test instead of hanging it). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('API_MAX_CONCURRENT_QUERIES: API GraphQL requests take turns', () => {
  let ctx: TestContext;
  const apps: FastifyInstance[] = [];

  /** An API of its own on a free port, with these settings over the test context's. */
  async function api(settings: Partial<AppContext['config']>): Promise<{ url: string; gate: QueryGate; app: FastifyInstance }> {
    const app = await buildApi({ ...ctx, config: { ...ctx.config, ...settings } });
    apps.push(app);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    return { url, gate: app.queryGate!, app };
  }

  beforeAll(async () => {
    ctx = await createTestContext();
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await ctx.destroy();
  });

  it('runs a request waiting for a turn once one is free, and gives the turn back after answering', async () => {
    const { url, gate } = await api({ apiMaxConcurrentQueries: 1, apiQueryWaitMs: 60_000 });
    const held = (await gate.acquire())!;
    const answer = graphql<{ version: string }>(url, '{ version }');
    await until(() => gate.queued === 1, 'the request waits');
    expect(gate.running).toBe(1);
    held();
    const a = await answer;
    expect(a.status).toBe(200);
    expect(typeof a.body.data?.version).toBe('string');
    await until(() => gate.running === 0 && gate.queued === 0, 'the turn is given back');
  });

  it('admits API_MAX_CONCURRENT_QUERIES requests at once and queues the next', async () => {
    const { url, gate } = await api({ apiMaxConcurrentQueries: 2, apiQueryWaitMs: 60_000 });
    const held = (await gate.acquire())!;
    // One of the two turns is free: requests run (one after another here) without waiting.
    expect((await graphql(url, '{ version }')).status).toBe(200);
    expect((await graphql(url, '{ version }')).status).toBe(200);
    expect(gate.queued).toBe(0);
    const taken = (await gate.acquire())!;
    const waiting = graphql(url, '{ version }');
    await until(() => gate.queued === 1, 'the request over the limit waits');
    expect(gate.running).toBe(2);
    held();
    taken();
    expect((await waiting).status).toBe(200);
    await until(() => gate.running === 0, 'every turn is given back');
  });

  it('refuses with 429 RATE_LIMITED when no turn comes within API_QUERY_WAIT_MS, and changes nothing', async () => {
    const { url, gate } = await api({ apiMaxConcurrentQueries: 1, apiQueryWaitMs: 0 });
    const held = (await gate.acquire())!;
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { createCarrier(carrier_tag: "gated", host: "10.0.0.9", port: 5060) { id } }' }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    const body = (await response.json()) as { errors: Array<{ message: string; extensions: Record<string, unknown> }> };
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', limit: 1, waitMs: 0, retryAfter: 1 });
    expect(body.errors[0].message).toContain('API_MAX_CONCURRENT_QUERIES');
    expect(await ctx.mongo.collections.carriers.countDocuments({ carrier_tag: 'gated' })).toBe(0);
    // Only GraphQL takes turns: probes and scrapes answer while every turn is held.
    expect((await fetch(`${url}/health`)).status).toBe(200);
    held();
    const after = await graphql(url, '{ version }');
    expect(after.status).toBe(200);
  });

  it('drops a waiting request whose client went away', async () => {
    const { url, gate } = await api({ apiMaxConcurrentQueries: 1, apiQueryWaitMs: 60_000 });
    const held = (await gate.acquire())!;
    const gone = abandonableGraphql(url, '{ version }');
    await until(() => gate.queued === 1, 'the request waits');
    gone.abort();
    expect(await gone.settled).toBe('AbortError');
    await until(() => gate.queued === 0, 'the abandoned request leaves the queue');
    expect(gate.running).toBe(1);
    held();
    expect(gate.running).toBe(0);
    expect((await graphql(url, '{ version }')).status).toBe(200);
    await until(() => gate.running === 0, 'the turn is given back');
  });

  it('never runs a waiting request whose client went away (a mutation included)', async () => {
    const { url, gate } = await api({ apiMaxConcurrentQueries: 1, apiQueryWaitMs: 60_000 });
    const held = (await gate.acquire())!;
    const gone = abandonableGraphql(url, 'mutation { createCarrier(carrier_tag: "left-waiting", host: "10.0.0.9", port: 5060) { id } }');
    await until(() => gate.queued === 1, 'the request waits');
    gone.abort();
    expect(await gone.settled).toBe('AbortError');
    await until(() => gate.queued === 0, 'the abandoned request leaves the queue');
    held();
    // Anything that would still run does so within a moment: a request after it is answered first.
    expect((await graphql(url, '{ version }')).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await ctx.mongo.collections.carriers.countDocuments({ carrier_tag: 'left-waiting' })).toBe(0);
  });

  it('keeps the turn of a running request whose client went away until its work is done', async () => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    let reads = 0;
    const carriers = new Proxy(ctx.mongo.collections.carriers, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (prop !== 'findOne') return (value as (...a: unknown[]) => unknown).bind(target);
        return async (...args: unknown[]) => {
          reads += 1;
          await opened;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const app = await buildApi({
      ...ctx,
      // The shared pool: the paused collection is the one the API's stores use.
      config: { ...ctx.config, apiMaxConcurrentQueries: 1, apiQueryWaitMs: 60_000, apiMongoPoolSize: 0 },
      mongo: { ...ctx.mongo, collections: { ...ctx.mongo.collections, carriers } },
    } as AppContext);
    apps.push(app);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const gate = app.queryGate!;
    const gone = abandonableGraphql(url, '{ Carrier(carrier_tag: "slow") { id } }');
    await until(() => reads === 1, 'the request runs');
    gone.abort();
    expect(await gone.settled).toBe('AbortError');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Its work goes on (the read is paused): the turn is still taken, and the next request waits.
    expect(gate.running).toBe(1);
    const next = graphql(url, '{ version }');
    await until(() => gate.queued === 1, 'the next request waits');
    open();
    expect((await next).status).toBe(200);
    await until(() => gate.running === 0, 'every turn is given back');
  });

  it('API_MAX_CONCURRENT_QUERIES=0 takes no turns', async () => {
    const { url, app } = await api({ apiMaxConcurrentQueries: 0 });
    expect(app.queryGate).toBeUndefined();
    const answers = await Promise.all(Array.from({ length: 5 }, () => graphql(url, '{ version }')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
  });
});

describe('API_MONGO_POOL_SIZE: the API reads and writes through its own pool or the shared one', () => {
  it.each([
    ['its own pool of 1 connection', 1],
    ['the process pool', 0],
  ])('%s: writes and reads answer as usual', async (_label, size) => {
    const ctx = await createTestContext({ API_MONGO_POOL_SIZE: String(size) });
    const app = await buildApi(ctx);
    try {
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const created = await graphql(url, 'mutation { createCarrier(carrier_tag: "pooled", host: "10.0.0.7", port: 5060) { id } }');
      expect(created.body.errors).toBeUndefined();
      // Many concurrent reads through a pool of one connection wait their turn in it and all answer.
      const reads = await Promise.all(
        Array.from({ length: 20 }, () => graphql<{ allCarriers: Array<{ carrier_tag: string }> }>(url, '{ allCarriers { carrier_tag } }')),
      );
      for (const r of reads) expect(r.body.data?.allCarriers.map((c) => c.carrier_tag)).toEqual(['pooled']);
      // What the API wrote is in the store the agent and the workers read.
      expect(await ctx.mongo.collections.carriers.countDocuments({ carrier_tag: 'pooled' })).toBe(1);
    } finally {
      await app.close();
      await ctx.destroy();
    }
  });
});
