import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { SettledMarkers } from '../../../src/shared/domain/ledger';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { recoverInterrupted, takeoverAfterMs } from '../../../src/workers/maintenance/recover';
import { begin } from '../../../src/workers/transactions/begin';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { endCall } from '../../../src/workers/transactions/end';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * Issue 36: a charge's marker, its ledger entry written, is removed by the account's next begin or end
 * from the same process instead of a command of its own; with no next call, by the recovery sweep.
 * Meanwhile the balance, the ledger and the audit agree (a marker whose entry exists counts once).
 */
describe('charge markers removed by the next write on the account', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const accounts = () => ctx.mongo.collections.accounts;
  const markers = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.ledger_pending ?? [];
  const jobs = callJobs(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const soon = () => Date.now() + 10_000;
  /** One call begun, ended after 10 s and charged, as a worker process runs it. */
  const call = async (tag: string, accountTag: string) => {
    expect(await begin(deps, jobs.begin(tag, accountTag), { id: `${tag}-begin`, deadline: soon() })).toEqual({ ok: true, reason: null });
    const ended = await endCall(deps, jobs.end(tag, accountTag, 10), { id: `${tag}-end`, deadline: soon() });
    expect(ended.result).toEqual({ ok: true, reason: null });
    expect((await processEndedCall(deps, ended.toProcess[0])).outcome).toBe('charged');
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, { ...perSecondRating(), accounts: [account('m1', { balance: 1000n }), account('m2', { balance: 1000n })] });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating, settledMarkers: new SettledMarkers() };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it("a charge leaves its settled marker until the account's next begin pulls it; the audit counts it once", async () => {
    await call('s1', 'm1');
    const [left] = await markers('m1');
    expect(left).toMatchObject({ op: expect.stringMatching(/^charge:/) });
    expect(await ctx.mongo.collections.ledger.findOne({ _id: left.op })).not.toBeNull();
    const report = await auditLedger(ctx.mongo.collections);
    expect(report.differences).toEqual([]);
    expect(await begin(deps, jobs.begin('s2', 'm1'), { id: 's2-begin', deadline: soon() })).toEqual({ ok: true, reason: null });
    expect(await markers('m1')).toEqual([]);
  });

  it('the next end pulls them too, and the charge of that call leaves only its own', async () => {
    // m1 runs s2 (begun above) and now s5: s2 is charged first, then s5's end carries s2's marker away.
    expect(await begin(deps, jobs.begin('s5', 'm1'), { id: 's5-begin', deadline: soon() })).toEqual({ ok: true, reason: null });
    const s2 = await endCall(deps, jobs.end('s2', 'm1', 5), { id: 's2-end', deadline: soon() });
    expect((await processEndedCall(deps, s2.toProcess[0])).outcome).toBe('charged');
    expect((await markers('m1')).map((m) => m.op)).toEqual([`charge:${s2.toProcess[0].entry_id}`]);
    const s5 = await endCall(deps, jobs.end('s5', 'm1', 7), { id: 's5-end', deadline: soon() });
    expect(s5.result).toEqual({ ok: true, reason: null });
    expect(await markers('m1')).toEqual([]);
    expect((await processEndedCall(deps, s5.toProcess[0])).outcome).toBe('charged');
    expect((await markers('m1')).map((m) => m.op)).toEqual([`charge:${s5.toProcess[0].entry_id}`]);
  });

  it('with no next call, the recovery sweep removes them', async () => {
    await call('s3', 'm2');
    expect(await markers('m2')).toHaveLength(1);
    await recoverInterrupted(deps, new Date(Date.now() + takeoverAfterMs(deps) + 60_000));
    expect(await markers('m2')).toEqual([]);
    expect(await markers('m1')).toEqual([]);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });
});
