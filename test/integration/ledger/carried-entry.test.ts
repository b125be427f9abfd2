import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import type { ProcessingJob } from '../../../src/shared/domain/queues/payloads';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { begin } from '../../../src/workers/transactions/begin';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { end, processingJobId } from '../../../src/workers/transactions/end';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { rollback } from '../../../src/workers/transactions/rollback';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * Issue 36: the processing job carries the entry its end left, and charges it without reading the
 * account. The charge stays guarded by the account holding that very entry ended by that end; when it
 * does not, processing reads the account and decides as it always did. Rates: a call of n seconds costs n + 1.
 */
describe('processing charges the entry its job carries, exactly once', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const accounts = () => ctx.mongo.collections.accounts;
  const transactions = () => ctx.mongo.collections.transactions;
  const balance = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.balance;
  const running = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.running_transactions;
  const jobs = callJobs(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const ok = { ok: true, reason: null };
  let n = 0;
  const ref = () => ({ id: `job-${++n}`, deadline: Date.now() + 10_000 });
  /** Begins and ends a call of `seconds` on `caller`; the processing job the end queued for `party`. */
  const endedCall = async (tag: string, caller: string, seconds: number, party = caller): Promise<ProcessingJob> => {
    expect(await begin(deps, jobs.begin(tag, caller), ref())).toEqual(ok);
    expect(await end(deps, jobs.end(tag, caller, seconds), ref())).toEqual(ok);
    const entry = (await running(party)).find((e) => e.transaction_tag === tag)!;
    const job = await ctx.queues.processing.getJob(processingJobId(entry.id));
    return job!.data as ProcessingJob;
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating(),
      accounts: [
        account('kid', { balance: 1000n, linked_accounts: ['mum'] }),
        account('mum', { balance: 1000n }),
        account('solo', { balance: 1000n }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('the job carries the ended entry of each party, and charges each once however often it runs', async () => {
    const kid = await endedCall('c1', 'kid', 10);
    const mum = await endedCall('c1b', 'kid', 20, 'mum');
    expect(kid.ended).toMatchObject({ transaction_tag: 'c1', origin_account_tag: 'kid', end_job: expect.any(String) });
    expect(mum.ended).toMatchObject({ transaction_tag: 'c1b', origin_account_tag: 'kid', call_parties: ['kid', 'mum'] });
    expect((await processEndedCall(deps, kid)).outcome).toBe('charged');
    expect((await processEndedCall(deps, kid)).outcome).toBe('already-done');
    expect((await processEndedCall(deps, mum)).outcome).toBe('charged');
    expect((await processEndedCall(deps, mum)).outcome).toBe('already-done');
    expect(await balance('mum')).toBe(1000n - 21n);
    expect(await transactions().countDocuments({ account_tag: 'mum', transaction_tag: 'c1b', state: 'charged' })).toBe(1);
  });

  it('a call rolled back before its processing runs: the carried entry charges nothing, its pending record goes', async () => {
    const job = await endedCall('c2', 'solo', 30);
    const before = await balance('solo');
    expect(await rollback(deps, jobs.rollback('c2', 'solo'), ref())).toEqual(ok);
    expect((await processEndedCall(deps, job)).outcome).toBe('rolled-back');
    expect(await balance('solo')).toBe(before);
    expect(await transactions().countDocuments({ account_tag: 'solo', transaction_tag: 'c2' })).toBe(0);
  });

  it('an entry the account holds but no longer as that end left it is read and charged from the account', async () => {
    const job = await endedCall('c3', 'solo', 5);
    const before = await balance('solo');
    // The recovery sweep settled the end (its job id cleared): the guard misses, the read path charges.
    await accounts().updateOne(
      { account_tag: 'solo' },
      { $set: { 'running_transactions.$[e].end_job': null } },
      { arrayFilters: [{ 'e.id': job.entry_id }] },
    );
    expect((await processEndedCall(deps, job)).outcome).toBe('charged');
    expect(await balance('solo')).toBe(before - 6n);
    expect(await running('solo')).toEqual([]);
  });

  it('leaves the ledger audit clean', async () => {
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });
});
