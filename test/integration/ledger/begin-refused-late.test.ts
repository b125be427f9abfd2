import { isReservation, type RunningTransaction } from '../../../src/shared/domain/types';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { authorize } from '../../../src/workers/transactions/authorization';
import { begin } from '../../../src/workers/transactions/begin';
import { decideRefusal } from '../../../src/workers/transactions/decide';
import { rollback } from '../../../src/workers/transactions/rollback';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * A begin refused by a linked party once the agent no longer waits (docs/AGENT.md, "Rollback"): the
 * agent answers TIMEOUT and the proxy may let the call run to its grant, so what its authorization
 * reserved (the parties' slots and holds) stays until it expires. Refused in time, it is released at once.
 */
describe('a linked call refused at begin, in time and too late', () => {
  let ctx: TestContext;
  let rating: RatingDataCache;
  let deps: TransactionDeps;
  const jobs = callJobs(Math.floor(Date.now() / 1000) * 1000);
  const running = async (tag: string): Promise<RunningTransaction[]> =>
    (await ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.running_transactions;

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating(),
      accounts: [
        account('child', { balance: 10_000n, linked_accounts: ['parent'] }),
        account('parent', { balance: 10_000n, hourly_spend_limit: 100_000n }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  /** Authorizes the call (reservations on both), then leaves the parent unable to pay its start. */
  const authorizedThenDrained = async (tag: string) => {
    expect(await authorize(deps, jobs.authorization(tag, 'child'))).toMatchObject({ authorized: true });
    expect((await running('child')).filter(isReservation)).toHaveLength(1);
    expect((await running('parent')).filter(isReservation)).toHaveLength(1);
    await ctx.mongo.collections.accounts.updateOne({ account_tag: 'parent' }, { $set: { balance: 0n } });
  };
  /** The begin as the worker runs it: the operation, then its answer decided. */
  const beginAnswered = async (d: TransactionDeps, tag: string, deadline: number) => {
    const job = jobs.begin(tag, 'child', deadline);
    const ref = { id: `begin-${tag}`, deadline };
    return decideRefusal(d, { jobId: ref.id, op: 'begin', account_tag: 'child', transaction_tag: tag }, deadline, await begin(d, job, ref));
  };

  it('refused in time: BALANCE_INSUFFICIENT, and every reservation of the call released', async () => {
    await authorizedThenDrained('in-time');
    expect(await beginAnswered(deps, 'in-time', Date.now() + 10_000)).toEqual({ ok: false, reason: 'BALANCE_INSUFFICIENT' });
    expect(await running('child')).toEqual([]);
    expect(await running('parent')).toEqual([]);
  });

  it('refused past the deadline: TIMEOUT, and the reservations stay (slot and hold) for the call that may run', async () => {
    await ctx.mongo.collections.accounts.updateOne({ account_tag: 'parent' }, { $set: { balance: 10_000n } });
    await authorizedThenDrained('late');
    const holdBefore = (await running('parent')).find(isReservation)!.hold;
    const deadline = Date.now() + 400;
    // The worker is slow to rate the call: the deadline passes before it writes anything.
    const slow: TransactionDeps = {
      ...deps,
      rating: {
        index: async () => {
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now()) + 100));
          return rating.index();
        },
      } as unknown as RatingDataCache,
    };
    expect(await beginAnswered(slow, 'late', deadline)).toEqual({ ok: false, reason: 'TIMEOUT' });
    expect((await running('child')).filter(isReservation)).toHaveLength(1);
    const parent = (await running('parent')).filter(isReservation);
    expect(parent).toHaveLength(1);
    expect(parent[0].hold).toBe(holdBefore);
  });

  it('a rollback decided on the entry that an undone begin turned back into its reservation releases that reservation', async () => {
    // The race: the rollback read the begin's entry X; the begin, abandoned, put reservation R back in
    // X's place before the rollback removed X. Decided on X, the rollback must not leave R holding.
    const reservation = (await running('child')).find((e) => e.transaction_tag === 'late')!;
    expect(isReservation(reservation)).toBe(true);
    await ctx.mongo.collections.outcomes.insertOne({
      _id: 'rollback-of-late',
      op: 'rollback',
      state: 'done',
      account_tag: 'child',
      transaction_tag: 'late',
      result: { ok: true, reason: null },
      targets: [
        { account_tag: 'child', entry_id: 'entry-made-from-reservation' },
        { account_tag: 'parent', entry_id: 'parent-entry-made-from-reservation' },
      ],
      at: new Date(),
    });
    const job = jobs.rollback('late', 'child');
    expect(await rollback(deps, job, { id: 'rollback-of-late', deadline: job.deadline })).toEqual({ ok: true, reason: null });
    expect((await running('child')).filter((e) => e.transaction_tag === 'late')).toEqual([]);
    expect((await running('parent')).filter((e) => e.transaction_tag === 'late')).toEqual([]);
  });
});
