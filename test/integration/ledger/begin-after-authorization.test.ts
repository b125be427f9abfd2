import { applyOnce, opIds } from '../../../src/shared/domain/ledger';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { authorize } from '../../../src/workers/transactions/authorization';
import { AuthorizationReads } from '../../../src/workers/transactions/authorization-reads';
import { begin } from '../../../src/workers/transactions/begin';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, pricelist, rate, runningEntry, seed } from '../../support/seed';

/**
 * Issue 36: a single-party call's begin adds its entry on the caller as its authorization read it,
 * without reading it again (src/workers/transactions/authorization-reads.ts). Every change of the
 * account between the two must make begin decide on a fresh read, exactly as it would without the kept
 * read: a balance spent, a price list changed, the account deactivated, another call begun.
 */
describe('begin on the account its authorization read', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  let reads: AuthorizationReads;
  const accounts = () => ctx.mongo.collections.accounts;
  const running = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.running_transactions;
  const jobs = callJobs(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const soon = () => Date.now() + 10_000;

  /** Authorization, then `between`, then begin, of call `tag` on `accountTag`: begin's answer. */
  const call = async (tag: string, accountTag: string, between: () => Promise<unknown> = async () => undefined) => {
    expect(await authorize(deps, jobs.authorization(tag, accountTag))).toMatchObject({ authorized: true });
    await between();
    const deadline = soon();
    return begin(deps, jobs.begin(tag, accountTag, deadline), { id: `${tag}-begin`, deadline });
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    const base = perSecondRating();
    await seed(ctx, {
      ...base,
      pricelists: [...base.pricelists, pricelist('dear')],
      rates: [...base.rates, rate('dear', 'c1', '39', { rate: 600, rate_increment: 1, connect_fee: 7 })],
      accounts: [
        account('plain', { balance: 1000n }),
        account('spent', { balance: 1000n }),
        account('repriced', { balance: 1000n }),
        account('closed', { balance: 1000n }),
        account('busy', { balance: 1000n }),
        account('limited', { balance: 1000n, max_concurrent_transactions: 5 }),
        account('trunk', {
          balance: 1000n,
          running_transactions: ['t1', 't2', 't3', 't4', 't5'].map((tag) => runningEntry(tag, { origin_account_tag: 'trunk' })),
        }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
  });

  beforeEach(() => {
    reads = new AuthorizationReads();
    deps = { ctx, rating, authorizationReads: reads };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('an unchanged account: the entry is added on the kept read, which is used once', async () => {
    expect(await call('p1', 'plain')).toEqual({ ok: true, reason: null });
    expect(await running('plain')).toEqual([expect.objectContaining({ transaction_tag: 'p1', begin_decided: true })]);
    expect(reads.take('plain')).toBeUndefined();
  });

  it('a balance spent between them: begin refuses on the fresh balance', async () => {
    const spend = () =>
      applyOnce(ctx.mongo.collections, {
        op: opIds.adjust('spend-all'),
        account_tag: 'spent',
        amount: -1000n,
        kind: 'adjust',
        transaction_tag: null,
        ref: 'test',
      });
    expect(await call('s1', 'spent', spend)).toEqual({ ok: false, reason: 'BALANCE_INSUFFICIENT' });
    expect(await running('spent')).toEqual([]);
  });

  it('a price list changed between them: the entry carries the new price', async () => {
    const reprice = () => accounts().updateOne({ account_tag: 'repriced' }, { $set: { pricelist_tags: ['dear'] }, $inc: { rev: 1 } });
    expect(await call('r1', 'repriced', reprice)).toEqual({ ok: true, reason: null });
    const [entry] = await running('repriced');
    expect(entry.rate).toMatchObject({ rate: 600, connect_fee: 7 });
  });

  it('the account deactivated between them: NOT_ACTIVE, nothing added', async () => {
    const deactivate = () => accounts().updateOne({ account_tag: 'closed' }, { $set: { active: false }, $inc: { rev: 1 } });
    expect(await call('c1', 'closed', deactivate)).toEqual({ ok: false, reason: 'NOT_ACTIVE' });
    expect(await running('closed')).toEqual([]);
  });

  it('another call begun between them: both begin, and the account is no longer kept for a while', async () => {
    const other = async () => {
      const deadline = soon();
      expect(await begin({ ctx, rating }, jobs.begin('b0', 'busy', deadline), { id: 'b0-begin', deadline })).toMatchObject({ ok: true });
    };
    expect(await call('b1', 'busy', other)).toEqual({ ok: true, reason: null });
    expect((await running('busy')).map((e) => e.transaction_tag).sort()).toEqual(['b0', 'b1']);
    expect(await authorize(deps, jobs.authorization('b2', 'busy'))).toMatchObject({ authorized: true });
    expect(reads.take('busy')).toBeUndefined();
  });

  it('an account with a concurrency limit (authorization reserves a slot) is not kept', async () => {
    expect(await authorize(deps, jobs.authorization('l1', 'limited'))).toMatchObject({ authorized: true });
    expect(reads.take('limited')).toBeUndefined();
  });

  it('an account with more than four calls running (large, changing) is not kept', async () => {
    expect(await authorize(deps, jobs.authorization('k1', 'trunk'))).toMatchObject({ authorized: true });
    expect(reads.take('trunk')).toBeUndefined();
    expect(await authorize(deps, jobs.authorization('p9', 'plain'))).toMatchObject({ authorized: true });
    expect(reads.take('plain')).toMatchObject({ account_tag: 'plain' });
  });
});
