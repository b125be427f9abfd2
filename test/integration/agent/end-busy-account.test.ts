import type { RunningTransaction } from '../../../src/shared/domain/types';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { end, processingJobId } from '../../../src/workers/transactions/end';
import { createTestContext, TestContext } from '../../support/harness';
import { account, runningEntry } from '../../support/seed';

/**
 * End reads back only the call's own entry of an account (a projection: a busy account holds hundreds
 * of running calls). Among many entries and a reservation of another call, it must end exactly the
 * call's entry and queue exactly that one.
 */
describe('end on an account holding many running calls', () => {
  let ctx: TestContext;
  let rating: RatingDataCache;
  const began = new Date(Date.now() - 60_000);
  const entry = (tag: string, overrides: Partial<RunningTransaction> = {}): RunningTransaction =>
    runningEntry(tag, { origin_account_tag: 'busy', timestamp_begin: began, call_parties: ['busy'], ...overrides });
  const others = Array.from({ length: 40 }, (_, i) => entry(`other-${i}`, { id: `entry-other-${i}` }));
  const reservationOf = (tag: string, caller: string): RunningTransaction =>
    runningEntry(tag, {
      id: `res-${caller}-${tag}`,
      origin_account_tag: caller,
      rate: null,
      carrier_ip: '',
      reserved_until: new Date(Date.now() + 60_000),
    });

  beforeAll(async () => {
    ctx = await createTestContext();
    rating = await RatingDataCache.start(ctx);
    await ctx.mongo.collections.accounts.insertOne(
      account('busy', {
        running_transactions: [...others.slice(0, 20), reservationOf('reserved-only', 'busy'), entry('mine'), ...others.slice(20)],
      }),
    );
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  const endCall = (tag: string, jobId: string) => {
    const deadline = Date.now() + 10_000;
    return end(
      { ctx, rating },
      { op: 'end', transaction_tag: tag, account_tag: 'busy', timestamp_end: new Date().toISOString(), deadline },
      { id: jobId, deadline, rerun: false },
    );
  };
  const running = async () => (await ctx.mongo.collections.accounts.findOne({ account_tag: 'busy' }))!.running_transactions;

  it('ends the call of the tag and queues its entry, leaving every other entry as it was', async () => {
    const before = await running();
    expect(await endCall('mine', 'end-mine')).toEqual({ ok: true, reason: null });
    const after = await running();
    expect(after).toHaveLength(before.length);
    for (const [i, e] of after.entries()) {
      if (e.id === 'entry-mine') expect(e).toMatchObject({ in_progress: false, end_job: 'end-mine' });
      else expect(e).toEqual(before[i]);
    }
    expect(await ctx.queues.processing.getJob(processingJobId('entry-mine'))).toBeDefined();
    expect(await ctx.queues.processing.getJob(processingJobId('entry-other-0'))).toBeUndefined();
  });

  it('answers ALREADY_ENDED for the same call again and NOT_FOUND for a call only reserved, changing nothing', async () => {
    const before = await running();
    expect(await endCall('mine', 'end-mine-again')).toEqual({ ok: false, reason: 'ALREADY_ENDED' });
    expect(await endCall('reserved-only', 'end-reserved')).toEqual({ ok: false, reason: 'NOT_FOUND' });
    expect(await running()).toEqual(before);
  });
});
