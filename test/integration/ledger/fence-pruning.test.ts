import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { recoverInterrupted, takeoverAfterMs } from '../../../src/workers/maintenance/recover';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * Fences (docs/AGENT.md, "What an answer means") stop a begin's or end's deciding write once the agent
 * abandoned it or its refusal was recorded. That write is only ever made before the job's deadline, and
 * the recovery sweep settles every job a takeover time after it; so an abandonment's or refusal's fence
 * is kept until then, not for the day a decision document is: an account refused or timed out hundreds
 * of times a second (an outage, a proxy looping on NOT_FOUND) grew its document by every one for a day,
 * on every read of the call path, toward MongoDB's 16 MB. A rollback's fence of a job decided by its own
 * write ('done': what says it was decided once the entry is gone) is kept the day.
 */
describe('fences are kept as long as they can matter', () => {
  let ctx: TestContext;
  let rating: RatingDataCache;
  let deps: TransactionDeps;

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, { ...perSecondRating(), accounts: [account('busy', { balance: 1000n })] });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('drops an abandonment fence once its job is past the sweep horizon, keeping recent ones and done ones', async () => {
    const now = new Date();
    const { agentTimeoutMs, agentAbandonMs } = ctx.config;
    const settled = new Date(now.getTime() - takeoverAfterMs(deps) - agentTimeoutMs - agentAbandonMs - 1000);
    const recent = new Date(now.getTime() - 1000);
    await ctx.mongo.collections.accounts.updateOne(
      { account_tag: 'busy' },
      {
        $set: {
          fenced_jobs: [
            { job: 'timed-out-long-ago', at: settled },
            { job: 'rolled-back-done', at: settled, done: true },
            // Past OUTCOME_RETENTION_SECONDS (a day), a rollback's fence goes with the decisions.
            { job: 'rolled-back-days-ago', at: new Date(now.getTime() - 2 * 86_400_000), done: true },
            { job: 'timed-out-just-now', at: recent },
          ],
        },
      },
    );
    await recoverInterrupted(deps, now);
    const fences = (await ctx.mongo.collections.accounts.findOne({ account_tag: 'busy' }))!.fenced_jobs!.map((f) => f.job);
    expect(fences.sort()).toEqual(['rolled-back-done', 'timed-out-just-now']);
  });
});
