import { jobId } from '../../../src/shared/domain/queues/names';
import { AgentHarness, QUEUED_PROCESSING, startAgentHarness, waitFor } from '../../support/agent-harness';
import { startWorkerProcess } from '../../support/processes';
import { account, perSecondRating, seed } from '../../support/seed';

/** Money paths under redelivery and crashes: every call is charged exactly once. */
describe('processing is exact under duplicate delivery and worker crashes', () => {
  let h: AgentHarness;
  const accounts = () => h.ctx.mongo.collections.accounts;
  const transactions = () => h.ctx.mongo.collections.transactions;
  const balance = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.balance;
  const runningCount = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.running_transactions.length;

  beforeAll(async () => {
    h = await startAgentHarness(2, QUEUED_PROCESSING);
    await seed(h.ctx, {
      ...perSecondRating(),
      accounts: [account('dup', { balance: 1_000_000n }), account('crash', { balance: 10_000_000n, type: 'POSTPAID' })],
    });
  });

  afterAll(() => h?.close());

  const begin = (tag: string, accountTag: string) =>
    h.rest('/v1/begin_transaction', {
      transaction_tag: tag,
      account_tag: accountTag,
      source: '1',
      destination: '391234',
      timestamp_begin: '2026-11-21T10:00:00Z',
    });
  const end = (tag: string, accountTag: string, seconds: number) =>
    h.rest('/v1/end_transaction', {
      transaction_tag: tag,
      account_tag: accountTag,
      timestamp_end: new Date(Date.parse('2026-11-21T10:00:00Z') + seconds * 1000).toISOString(),
    });

  it('the same processing job delivered twice debits once', async () => {
    await h.ctx.queues.processing.pause();
    try {
      expect((await begin('d1', 'dup')).body).toMatchObject({ ok: true, reason: null });
      expect((await end('d1', 'dup', 10)).body).toMatchObject({ ok: true, reason: null });
      // Two more deliveries of the same work under other job ids, as after a lost lock or a re-enqueue.
      const entryId = (await accounts().findOne({ account_tag: 'dup' }))!.running_transactions[0].id;
      const payload = { account_tag: 'dup', transaction_tag: 'd1', entry_id: entryId, enqueued_at: new Date().toISOString() };
      await h.ctx.queues.processing.add('process', payload, { jobId: `${jobId('process', entryId)}/again` });
      await h.ctx.queues.processing.add('process', payload, { jobId: `${jobId('process', entryId)}/third` });
    } finally {
      await h.ctx.queues.processing.resume();
    }
    await waitFor(async () => (await h.ctx.queues.processing.getJobCounts('completed')).completed >= 3, 'three deliveries processed');
    // 1 connect + 10 s at 60 per minute = 11
    expect(await balance('dup')).toBe(1_000_000n - 11n);
    expect(await transactions().countDocuments({ account_tag: 'dup', transaction_tag: 'd1' })).toBe(1);
    expect(await runningCount('dup')).toBe(0);
  });

  it('a worker killed mid-processing and a restarted one leave balances and records exact', async () => {
    const calls = 200;
    await h.ctx.queues.processing.pause();
    let expected = 0n;
    try {
      for (let i = 0; i < calls; i += 20) {
        await Promise.all(Array.from({ length: 20 }, (_, j) => begin(`k${i + j}`, 'crash')));
      }
      for (let i = 0; i < calls; i += 20) {
        await Promise.all(Array.from({ length: 20 }, (_, j) => end(`k${i + j}`, 'crash', i + j)));
      }
      for (let i = 0; i < calls; i++) expected += i === 0 ? 0n : 1n + BigInt(i);
    } finally {
      await h.ctx.queues.processing.resume();
    }
    await waitFor(async () => (await transactions().countDocuments({ account_tag: 'crash' })) > 0, 'first records');
    await h.workers[0].kill();
    const replacement = await startWorkerProcess(h.ctx.config);
    try {
      await waitFor(async () => (await runningCount('crash')) === 0, 'all calls processed', 60000);
      await waitFor(
        async () => (await transactions().countDocuments({ account_tag: 'crash', state: 'charged' })) === calls,
        'all records charged',
        60000,
      );
    } finally {
      await replacement.stop();
    }
    expect(await transactions().countDocuments({ account_tag: 'crash' })).toBe(calls);
    expect(await balance('crash')).toBe(10_000_000n - expected);
  }, 120000);
});
