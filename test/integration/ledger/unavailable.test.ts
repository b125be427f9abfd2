import type { FastifyInstance } from 'fastify';
import { buildAgent } from '../../../src/agent/app';
import type { AppContext } from '../../../src/shared/domain/context';
import { waitFor } from '../../support/agent-harness';
import { OwnMongo } from '../../support/own-mongo';
import { startWorkerProcess, WorkerProcess } from '../../support/processes';
import { account, perSecondRating, seed } from '../../support/seed';
import { callQueueIdle } from '../../support/call-slots';

/**
 * Issue 9, defect 11: while the store is unreachable the agent answers a clear refusal (UNAVAILABLE,
 * HTTP 200), never a 500, and what it refused leaves nothing behind once the store is back. The agent
 * and a worker process run against a MongoDB-wire server of their own, stopped and restarted here.
 */
describe('agent while MongoDB is unreachable', () => {
  let own: OwnMongo | undefined;
  let ctx: AppContext | undefined;
  let app: FastifyInstance | undefined;
  let worker: WorkerProcess | undefined;
  let url: string;

  beforeAll(async () => {
    own = await OwnMongo.start('rating-unavailable-', { AGENT_TIMEOUT_MS: '1500', JOB_LOCK_MS: '2000', LONG_CALL_SCAN_SECONDS: '2' });
    ctx = own.ctx;
    await seed(ctx, {
      ...perSecondRating(),
      accounts: [account('cust', { balance: 1000n, linked_accounts: ['parent'] }), account('parent', { balance: 1000n })],
    });
    app = await buildAgent(ctx);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    worker = await startWorkerProcess(own.config, { MONGO_URL: own.url });
  }, 180000);

  afterAll(async () => {
    await worker?.kill();
    await app?.close();
    await own?.close();
  });

  const begin = async (tag: string) => {
    const response = await fetch(`${url}/v1/begin_transaction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ transaction_tag: tag, account_tag: 'cust', source: '1', destination: '391234' }),
    });
    return { status: response.status, body: (await response.json()) as { ok: boolean; reason: string | null } };
  };

  it('answers UNAVAILABLE, not a 500, and applies nothing', async () => {
    expect(await begin('before')).toMatchObject({ status: 200, body: { ok: true, reason: null } });
    await own!.stop();

    // The agent cannot record the begin abandoned: it cannot promise that nothing happened (issue 37).
    expect(await begin('during')).toMatchObject({ status: 200, body: { ok: false, reason: 'OUTCOME_UNKNOWN' } });

    await own!.restart();
    // The worker and the agent reconnect by themselves.
    let n = 0;
    await waitFor(async () => (await begin(`after${n++}`)).body.ok, 'a begin accepted again', 60000);
    // The job of 'during' ran (or runs) once the store is back, past its deadline: it takes itself back.
    const entriesOf = async (tag: string) => (await ctx!.mongo.collections.accounts.findOne({ account_tag: tag }))!.running_transactions;
    await waitFor(() => callQueueIdle(ctx!), 'no job in hand', 30000);
    for (const tag of ['cust', 'parent']) {
      const tags = (await entriesOf(tag)).map((e) => e.transaction_tag);
      expect(tags).toContain('before');
      expect(tags).not.toContain('during');
    }
    // Sent again, the same request answers what happened: the first attempt did not, so this one begins it.
    expect(await begin('during')).toMatchObject({ status: 200, body: { ok: true, reason: null } });
    for (const tag of ['cust', 'parent']) expect((await entriesOf(tag)).filter((e) => e.transaction_tag === 'during')).toHaveLength(1);
  }, 120000);

  /**
   * Issue 37, timeline 1: requests in flight when the MongoDB-wire server stops (SIGTERM) and comes back
   * within the agent's wait. Whatever each answer was, it is true once the workers and the recovery sweep
   * are done: TIMEOUT and UNAVAILABLE left nothing, ok left the call, and OUTCOME_UNKNOWN, sent again,
   * answers what happened (ok: it begins now; DUPLICATE_TRANSACTION / ALREADY_ENDED: it had happened).
   */
  it('answers only what is true for requests in flight across a MongoDB restart', async () => {
    const post = async (path: string, body: Record<string, unknown>) => {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await response.json()) as { ok: boolean; reason: string | null };
    };
    const t0 = Date.now() - 60_000;
    const recordBody = (tag: string) => ({
      transaction_tag: tag,
      account_tag: 'cust',
      source: '1',
      destination: '391234',
      timestamp_begin: new Date(t0).toISOString(),
      timestamp_end: new Date(t0 + 10_000).toISOString(),
    });
    const beginBody = (tag: string) => ({ transaction_tag: tag, account_tag: 'cust', source: '1', destination: '391234' });
    const tags = Array.from({ length: 6 }, (_, i) => `flight${i}`);
    const answers = tags.map((tag, i) =>
      i % 2 === 0 ? post('/v1/record_transaction', recordBody(tag)) : post('/v1/begin_transaction', beginBody(tag)),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
    await own!.stop();
    await new Promise((resolve) => setTimeout(resolve, 800));
    await own!.restart();
    const results = await Promise.all(answers);
    // The workers and the sweep settle everything (takeover: 2 x JOB_LOCK_MS + 5 s past each deadline).
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    await waitFor(() => callQueueIdle(ctx!), 'no job in hand', 30000);
    const records = ctx!.mongo.collections.transactions;
    const entriesOf = async (tag: string) =>
      ((await ctx!.mongo.collections.accounts.findOne({ account_tag: 'cust' }))!.running_transactions ?? []).filter(
        (e) => e.transaction_tag === tag,
      );
    const held = async (tag: string, i: number) =>
      i % 2 === 0 ? records.countDocuments({ account_tag: 'cust', transaction_tag: tag }) : (await entriesOf(tag)).length;
    for (const [i, tag] of tags.entries()) {
      const answer = results[i];
      if (answer.reason === 'OUTCOME_UNKNOWN') {
        const again = await (i % 2 === 0 ? post('/v1/record_transaction', recordBody(tag)) : post('/v1/begin_transaction', beginBody(tag)));
        expect([null, 'DUPLICATE_TRANSACTION']).toContain(again.reason);
        expect(await held(tag, i)).toBe(1);
      } else if (answer.ok) {
        expect(await held(tag, i)).toBe(1);
      } else {
        expect(['TIMEOUT', 'UNAVAILABLE']).toContain(answer.reason);
        expect({ tag, held: await held(tag, i) }).toEqual({ tag, held: 0 });
      }
    }
  }, 120000);
});
