import type { RunningTransaction } from '../../../src/shared/domain/types';
import { QueueNames } from '../../../src/shared/domain/queues/names';
import { processingJobId } from '../../../src/workers/transactions/end';
import { ENDED_GRACE_MS, requeueEndedCalls } from '../../../src/workers/maintenance/requeue-ended';
import { startWorkers, WorkerPool } from '../../../src/workers/worker-pool';
import { createTestContext, TestContext } from '../../support/harness';
import { account, runningEntry } from '../../support/seed';
import { waitFor } from './receivers';

function ended(tag: string, endedMsAgo: number): RunningTransaction {
  const end = Date.now() - endedMsAgo;
  return runningEntry(tag, { in_progress: false, timestamp_begin: new Date(end - 30_000), timestamp_end: new Date(end) });
}

/** An ended call whose processing job was lost (worker death between end and enqueue) is found and billed. */
describe('maintenance: ended calls left unprocessed', () => {
  let ctx: TestContext;
  let pool: WorkerPool | undefined;

  beforeAll(async () => {
    ctx = await createTestContext();
    await ctx.mongo.collections.accounts.insertOne(
      account('lost', { balance: 1000n, running_transactions: [ended('lost-call', ENDED_GRACE_MS + 60_000), ended('just-ended', 1000)] }),
    );
  });

  afterAll(async () => {
    await pool?.close();
    await ctx?.destroy();
  });

  it('queues the lost call once, leaves a recently ended one alone, and processing then charges it', async () => {
    expect(await requeueEndedCalls(ctx)).toBe(1);
    const job = await ctx.queues.processing.getJob(processingJobId('entry-lost-call'));
    expect(job?.data).toMatchObject({ account_tag: 'lost', transaction_tag: 'lost-call' });
    expect(await ctx.queues.processing.getJob(processingJobId('entry-just-ended'))).toBeUndefined();
    // Already queued and waiting: a second pass adds nothing.
    expect(await requeueEndedCalls(ctx)).toBe(0);
    expect(await ctx.queues.processing.getJobCountByTypes('waiting')).toBe(1);

    pool = await startWorkers(ctx, [QueueNames.processing]);
    const accounts = ctx.mongo.collections.accounts;
    await waitFor(
      async () => (await accounts.findOne({ account_tag: 'lost' }))!.running_transactions.length === 1,
      'the lost call processed',
    );
    // 30 s at 60 per minute, per-second increments: 30.
    expect((await accounts.findOne({ account_tag: 'lost' }))!.balance).toBe(970n);
    expect(await ctx.mongo.collections.transactions.findOne({ account_tag: 'lost', transaction_tag: 'lost-call' })).toMatchObject({
      fee: 30n,
      duration: 30,
      state: 'charged',
    });
  });
});
