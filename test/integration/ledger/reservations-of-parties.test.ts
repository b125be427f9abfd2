import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { authorize } from '../../../src/workers/transactions/authorization';
import { begin } from '../../../src/workers/transactions/begin';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { rollback } from '../../../src/workers/transactions/rollback';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * What an authorization holds on the parties of a call (a reseller's spend-limit hold, a concurrency
 * slot) is released when the call will not run, and a hold is not lost when the call is answered after
 * its reservation ran out (docs/AGENT.md, "Spend limits"). The worker's functions run in this process
 * against the real servers. Rates: 60 per minute in 1 s steps with a connect fee of 1.
 */
describe('reservations of every party of a call', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const accounts = () => ctx.mongo.collections.accounts;
  const running = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.running_transactions;
  let jobCount = 0;
  const run = async <J extends { deadline: number }, R>(
    fn: (d: TransactionDeps, job: J, r: { id: string; deadline: number }) => Promise<R>,
    job: J,
  ) => fn(deps, job, { id: `job-${++jobCount}`, deadline: job.deadline });

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating(),
      accounts: [
        // A child without limits under a reseller with an hourly limit and a concurrency limit.
        account('child', { balance: 10_000n, linked_accounts: ['reseller'] }),
        account('reseller', { balance: 10_000n, hourly_spend_limit: 1000n, max_concurrent_transactions: 3 }),
        // A child with a concurrency limit under a reseller with one: begin is refused by the child.
        account('child2', { balance: 10_000n, linked_accounts: ['poor'], max_concurrent_transactions: 3 }),
        account('poor', { balance: 10_000n, max_concurrent_transactions: 3 }),
        // An account with an hourly limit whose call is answered after its reservation ran out.
        account('limited', { type: 'POSTPAID', balance: 0n, hourly_spend_limit: 1000n }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it("a rollback of a call that was never answered releases the reseller's hold and slot, though the child itself held nothing", async () => {
    const jobs = callJobs(Date.now());
    expect(await run(authorize, jobs.authorization('busy-1', 'child'))).toMatchObject({ authorized: true });
    expect(await running('reseller')).toHaveLength(1);
    // The callee is busy: the proxy rolls the call back (docs/SIP.md).
    expect(await run(rollback, jobs.rollback('busy-1', 'child'))).toMatchObject({ ok: true });
    expect(await running('reseller')).toEqual([]);
    expect(await running('child')).toEqual([]);
  });

  it('a begin refused by the caller releases the reservations of the parties after it too', async () => {
    const jobs = callJobs(Date.now());
    expect(await run(authorize, jobs.authorization('poor-1', 'child2'))).toMatchObject({ authorized: true });
    expect(await running('poor')).toHaveLength(1);
    // The child's money goes before the answer: its balance no longer pays the start.
    await accounts().updateOne({ account_tag: 'child2' }, { $set: { balance: 0n }, $inc: { rev: 1 } });
    expect(await run(begin, jobs.begin('poor-1', 'child2'))).toMatchObject({ ok: false, reason: 'BALANCE_INSUFFICIENT' });
    expect(await running('poor')).toEqual([]);
    expect(await running('child2')).toEqual([]);
  });

  it("a begin refused after the agent stopped waiting (answered TIMEOUT: the call may still run) keeps the other parties' reservations", async () => {
    const jobs = callJobs(Date.now());
    await accounts().updateOne({ account_tag: 'child2' }, { $set: { balance: 10_000n }, $inc: { rev: 1 } });
    expect(await run(authorize, jobs.authorization('late-refusal', 'child2'))).toMatchObject({ authorized: true });
    await accounts().updateOne({ account_tag: 'child2' }, { $set: { balance: 0n }, $inc: { rev: 1 } });
    // The refusal comes past the job's deadline: the agent has answered TIMEOUT ("nothing happened"), and
    // the proxy lets the call run to its grant; what the grant was sized on stays held.
    await run(begin, jobs.begin('late-refusal', 'child2', Date.now() - 1));
    expect((await running('poor')).map((e) => e.transaction_tag)).toEqual(['late-refusal']);
    await accounts().updateOne(
      { account_tag: 'poor' },
      { $pull: { running_transactions: { transaction_tag: 'late-refusal' } }, $inc: { rev: 1 } },
    );
  });

  it('a call answered after its reservation ran out keeps the hold its grant was sized on, so a second call cannot spend the same hour', async () => {
    const jobs = callJobs(Date.now());
    const first = await run(authorize, jobs.authorization('late-1', 'limited'));
    expect(first).toMatchObject({ authorized: true, max_available_units: 997 }); // 1 + 999 s = 1000, less the 2 s headroom
    // The reservation runs out before the answer (a ringing time past RESERVATION_SECONDS).
    await accounts().updateOne(
      { account_tag: 'limited' },
      { $set: { 'running_transactions.0.reserved_until': new Date(Date.now() - 1000) }, $inc: { rev: 1 } },
    );
    expect(await run(begin, jobs.begin('late-1', 'limited'))).toMatchObject({ ok: true });
    const [entry] = await running('limited');
    expect(entry.hold).toBe(1000n);
    // The hour's limit is held by the first call's grant: a second call is refused, not granted the same money.
    expect(await run(authorize, jobs.authorization('late-2', 'limited'))).toMatchObject({
      authorized: false,
      unauthorized_reason: 'SPEND_LIMIT_EXCEEDED',
    });
  });
});
