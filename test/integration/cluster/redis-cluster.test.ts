import type { FastifyInstance } from 'fastify';
import { buildAgent } from '../../../src/agent/app';
import { enqueueAlert } from '../../../src/shared/domain/alerts/enqueue';
import { isCluster, keysEverywhere, pingRedis } from '../../../src/shared/infra/redis';
import { AgentHarness, QUEUED_PROCESSING, startAgentHarness, waitFor } from '../../support/agent-harness';
import { createTestContext, TestContext } from '../../support/harness';
import { startRedisCluster, RedisClusterHandle } from '../../support/redis-cluster';
import { account, carrier, pricelist, rate, seed } from '../../support/seed';
import { csvOf, importFile, summaryOf, tempFile } from '../import/support';

/**
 * Everything on a real Redis Cluster (issue 13): three masters on loopback, the agent in this process
 * and a worker process connected through REDIS_CLUSTER_NODES; MongoDB is the usual test server.
 */
describe('on a Redis Cluster', () => {
  let cluster: RedisClusterHandle;
  let h: AgentHarness | undefined;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    h = await startAgentHarness(1, { ...QUEUED_PROCESSING, REDIS_CLUSTER_NODES: cluster.nodes, RECORD_BATCH_MAX: '5' });
    await seed(h.ctx, {
      carriers: [carrier('c1', { host: '10.0.0.1', port: 5060 })],
      pricelists: [pricelist('pl')],
      rates: [
        rate('pl', 'c1', '3932', { rate: 20, rate_increment: 60 }),
        rate('pl', 'c1', '49', { rate: 60, rate_increment: 1, connect_fee: 0 }),
      ],
      accounts: [
        account('alice', { balance: 100n }),
        account('recorder', { balance: 1000n }),
        account('a0', { balance: 1_000_000n }),
        account('a1', { balance: 1_000_000n }),
      ],
    });
  }, 60000);

  afterAll(async () => {
    await h?.close();
    await cluster?.stop();
  });

  const hx = () => h!;
  const balance = async (tag: string) => (await hx().ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.balance;
  const running = async (tag: string) => (await hx().ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.running_transactions;

  it('connects through the cluster client, and /ready checks every master', async () => {
    expect(isCluster(hx().ctx.redis)).toBe(true);
    expect(await pingRedis(hx().ctx.redis)).toBe(true);
    const ready = await fetch(`${hx().url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ redis: true, mongo: true });
  });

  it('authorization, begin, end, then processing charges the call', async () => {
    const auth = await hx().rest('/v1/authorization', { account_tag: 'alice', destination: '393299' });
    expect(auth).toMatchObject({ status: 200, body: { authorized: true, carriers: ['UDP:10.0.0.1:5060'] } });
    await hx().ctx.queues.processing.pause();
    try {
      const begin = await hx().rest('/v1/begin_transaction', {
        transaction_tag: 't1',
        account_tag: 'alice',
        source: '100',
        destination: '393299',
        timestamp_begin: '2026-11-21T10:00:00Z',
      });
      expect(begin).toMatchObject({ status: 200, body: { ok: true, reason: null } });
      const end = await hx().rest('/v1/end_transaction', {
        transaction_tag: 't1',
        account_tag: 'alice',
        timestamp_end: '2026-11-21T10:00:38Z',
      });
      expect(end).toMatchObject({ status: 200, body: { ok: true, reason: null } });
      expect((await running('alice'))[0]).toMatchObject({ transaction_tag: 't1', in_progress: false });
    } finally {
      await hx().ctx.queues.processing.resume();
    }
    await waitFor(async () => (await running('alice')).length === 0, 'processing');
    expect(await balance('alice')).toBe(80n);
    expect(await hx().ctx.mongo.collections.transactions.findOne({ account_tag: 'alice', transaction_tag: 't1' })).toMatchObject({
      fee: 20n,
      state: 'charged',
    });
  });

  it('recordTransaction records and debits once', async () => {
    const input = {
      transaction_tag: 'rec1',
      account_tag: 'recorder',
      source: '100',
      destination: '393299',
      timestamp_begin: '2026-11-21T10:00:00Z',
      timestamp_end: '2026-11-21T10:01:01Z',
    };
    expect((await hx().rest('/v1/record_transaction', input)).body).toMatchObject({ ok: true, reason: null });
    expect((await hx().rest('/v1/record_transaction', input)).body).toMatchObject({ ok: false, reason: 'DUPLICATE_TRANSACTION' });
    expect(await balance('recorder')).toBe(1000n - 40n);
  });

  it('import batches: recordTransactions through the agent and a file through the CLI', async () => {
    const call = (tag: string) => ({
      transaction_tag: tag,
      account_tag: 'recorder',
      source: '100',
      destination: '393299',
      timestamp_begin: '2026-11-21T10:00:00Z',
      timestamp_end: '2026-11-21T10:00:38Z',
    });
    const { body } = await hx().gql(`mutation($t: [RecordInput!]!) { recordTransactions(transactions: $t) { index ok reason } }`, {
      t: [call('b1'), call('b2'), call('b1')],
    });
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      recordTransactions: [
        { index: 0, ok: true, reason: null },
        { index: 1, ok: true, reason: null },
        { index: 2, ok: false, reason: 'DUPLICATE_TRANSACTION' },
      ],
    });
    expect(await balance('recorder')).toBe(1000n - 40n - 2n * 20n);

    const file = tempFile(
      'cdr.csv',
      csvOf([
        { tag: 'f1', account: 'a0', seconds: 30 },
        { tag: 'f2', account: 'a1', seconds: 45 },
        { tag: 'f3', account: 'a0', seconds: 5 },
      ]),
    );
    const { code, output } = await importFile(hx().ctx, [file, '--batch-size', '2', '--no-progress']);
    expect({ code, output }).toMatchObject({ code: 0 });
    expect(summaryOf(output)).toBeDefined();
    expect(await balance('a0')).toBe(1_000_000n - 35n);
    expect(await balance('a1')).toBe(1_000_000n - 45n);
  });

  it('keeps all of a deployment’s queue keys in one hash slot ({prefix}), other keys spread', async () => {
    const prefix = hx().ctx.config.queuePrefix;
    const queueKeys = await keysEverywhere(hx().ctx.redis, `{${prefix}}:*`);
    expect(queueKeys.length).toBeGreaterThan(0);
    expect(await keysEverywhere(hx().ctx.redis, `${prefix}:transactions:*`)).toEqual([]);
    const slots = new Set(await Promise.all(queueKeys.slice(0, 20).map((k) => hx().ctx.redis.call('CLUSTER', 'KEYSLOT', k))));
    expect(slots.size).toBe(1);
    // The schedule (job scheduler of the maintenance queue) lives in the queue's keys.
    expect(await hx().ctx.queues.maintenance.getJobSchedulersCount()).toBeGreaterThan(0);
    expect(await keysEverywhere(hx().ctx.redis, `${prefix}:rating-data:version`)).toHaveLength(1);
  });

  it('alert dedupe works per key on the cluster', async () => {
    const alert = {
      kind: 'LOW_BALANCE' as const,
      account_tag: 'alice',
      transaction_tag: null,
      message: 'low',
      email: null,
      mobile: null,
      details: {},
      at: new Date().toISOString(),
    };
    expect(await enqueueAlert(hx().ctx, alert, { condition: 'below:100', occurrence: '1' })).toBe(true);
    expect(await enqueueAlert(hx().ctx, alert, { condition: 'below:100', occurrence: '2' })).toBe(false);
  });

  describe('rate limit', () => {
    const TOKEN = 'cluster-agent-token-0123456789';
    let ctx: TestContext | undefined;
    let agent: FastifyInstance | undefined;

    afterAll(async () => {
      await agent?.close();
      await ctx?.destroy();
    });

    it('refuses past RATE_LIMIT_MAX with 429 RATE_LIMITED, counted in the cluster under a well-formed key', async () => {
      ctx = await createTestContext({
        REDIS_CLUSTER_NODES: cluster.nodes,
        RATING_TOKENS: `switch:agent:${TOKEN}`,
        RATE_LIMIT_MAX: '2',
        RATE_LIMIT_WINDOW_MS: '60000',
      });
      agent = await buildAgent(ctx);
      const url = await agent.listen({ host: '127.0.0.1', port: 0 });
      const ask = () =>
        fetch(`${url}/v1/authorization`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
          // Refused as bad input after the rate limit (no worker needed): the limit counts every request.
          body: JSON.stringify({}),
        });
      for (let i = 0; i < 2; i++) expect((await ask()).status).toBe(400);
      const refused = await ask();
      expect(refused.status).toBe(429);
      expect(JSON.stringify(await refused.json())).toContain('RATE_LIMITED');
      const keys = await keysEverywhere(ctx.redis, `${ctx.config.queuePrefix}:rate-limit:*`);
      // <prefix>:rate-limit:<server>:<token id> (the token id of RATING_TOKENS' "switch" is env:switch).
      expect(keys).toEqual([`${ctx.config.queuePrefix}:rate-limit:agent:token:env:switch`]);
    });
  });
});
