import type { RunningTransaction } from '../../../src/shared/domain/types';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { end } from '../../../src/workers/transactions/end';
import { createTestContext, TestContext } from '../../support/harness';
import { account, runningEntry } from '../../support/seed';

/**
 * An end retried while the first attempt is still running past its deadline (found by the chaos test,
 * session 3): the first attempt, abandoned, ends a parent's entry after the retry took the caller's
 * back. The retry must take the parent's back too and end it itself; before, it skipped the parent,
 * whose entry the abandoned attempt then put back in progress: the call was charged to the caller
 * and never to the parent, whose entry ran forever.
 */
describe('end: a party ended by an abandoned end of the same call', () => {
  let ctx: TestContext;
  let rating: RatingDataCache;
  const began = new Date(Date.now() - 60_000);
  const entry = (id: string, overrides: Partial<RunningTransaction> = {}): RunningTransaction =>
    runningEntry('t1', { id, origin_account_tag: 'a1', timestamp_begin: began, call_parties: ['a1', 'p1'], ...overrides });

  beforeAll(async () => {
    ctx = await createTestContext();
    rating = await RatingDataCache.start(ctx);
    await ctx.mongo.collections.accounts.insertMany([
      account('a1', { linked_accounts: ['p1'], running_transactions: [entry('e-a1')] }),
      // The first end (job J1, its deadline gone, never decided) ended the parent only.
      account('p1', {
        running_transactions: [
          entry('e-p1', { in_progress: false, timestamp_end: new Date(), end_job: 'J1', end_deadline: Date.now() - 1000 }),
        ],
      }),
    ]);
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('takes the parent back from the abandoned end and ends it with the call', async () => {
    const deadline = Date.now() + 10_000;
    const result = await end(
      { ctx, rating },
      { op: 'end', transaction_tag: 't1', account_tag: 'a1', timestamp_end: new Date().toISOString(), deadline },
      { id: 'J2', deadline, rerun: false },
    );
    expect(result).toEqual({ ok: true, reason: null });
    const entryOf = async (tag: string) => (await ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.running_transactions[0];
    expect(await entryOf('a1')).toMatchObject({ in_progress: false, end_job: 'J2' });
    expect(await entryOf('p1')).toMatchObject({ in_progress: false, end_job: 'J2' });
    expect(await ctx.mongo.collections.outcomes.findOne({ _id: 'J1' })).toMatchObject({ state: 'abandoned' });
  });
});
