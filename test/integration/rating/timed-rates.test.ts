import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { authorize } from '../../../src/workers/transactions/authorization';
import { begin } from '../../../src/workers/transactions/begin';
import { end } from '../../../src/workers/transactions/end';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { record } from '../../../src/workers/transactions/record';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { account, carrier, pricelist, rate, seed } from '../../support/seed';

/**
 * Issue 34, part 1: a call that crosses a price boundary is rated per segment, through the real call
 * path (begin, end, processing; recordTransaction) against the real servers. Base price 60 per minute
 * (1 a second), peak 600 per minute (10 a second) on weekdays 18:00-22:00 UTC, both in 1 s steps, no
 * connect fee. Calls start on Monday 2026-01-05 at 17:59:00 UTC: their first minute is off-peak.
 */
describe('rates by time of day through the call path', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const t0 = Date.parse('2026-01-05T17:59:00Z');
  const jobs = callJobs(t0);
  const accounts = () => ctx.mongo.collections.accounts;
  const balance = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.balance;
  const recordOf = async (tag: string, txTag: string) =>
    ctx.mongo.collections.transactions.findOne({ account_tag: tag, transaction_tag: txTag });
  let jobCount = 0;
  const run = async <J extends { deadline: number }, R>(
    fn: (d: TransactionDeps, job: J, r: { id: string; deadline: number }) => Promise<R>,
    job: J,
  ) => fn(deps, job, { id: `job-${++jobCount}`, deadline: job.deadline });

  const peak = { days: [1, 2, 3, 4, 5], start: '18:00:00', end: '22:00:00', holidays: null };
  /** A boundary one minute from now (UTC), for authorization, which sizes the grant from the present. */
  const soon = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000);
  const hhmmss = (d: Date) => d.toISOString().slice(11, 19);
  const soonWindow = { days: null, start: hhmmss(soon), end: hhmmss(new Date(soon.getTime() + 2 * 3_600_000)), holidays: null };

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      carriers: [carrier('c1')],
      pricelists: [pricelist('pl'), pricelist('soon'), pricelist('steps')],
      rates: [
        rate('pl', 'c1', '39', { rate: 60, rate_increment: 1, description: 'base' }),
        rate('pl', 'c1', '39', { rate: 600, rate_increment: 1, description: 'peak', timing: peak, timing_key: 'peak' }),
        rate('soon', 'c1', '39', { rate: 60, rate_increment: 1, description: 'base' }),
        rate('soon', 'c1', '39', { rate: 600, rate_increment: 1, description: 'peak', timing: soonWindow, timing_key: 'soon' }),
        rate('steps', 'c1', '39', { rate: 60, rate_increment: 60, interval_start: 30, description: 'base' }),
        rate('steps', 'c1', '39', {
          rate: 600,
          rate_increment: 60,
          interval_start: 30,
          description: 'peak',
          timing: peak,
          timing_key: 'peak',
        }),
      ],
      accounts: [
        account('postpaid', { type: 'POSTPAID', balance: 0n, pricelist_tags: ['pl'] }),
        account('recorder', { type: 'POSTPAID', balance: 0n, pricelist_tags: ['pl'] }),
        account('prepaid', { balance: 600n, pricelist_tags: ['soon'] }),
        account('short', { balance: 599n, pricelist_tags: ['steps'] }),
        account('enough', { balance: 600n, pricelist_tags: ['steps'] }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('a call from 17:59 for 120 s is charged 60 off-peak and 600 at peak, and its record keeps both segments', async () => {
    expect(await run(begin, jobs.begin('x1', 'postpaid'))).toMatchObject({ ok: true });
    expect(await run(end, jobs.end('x1', 'postpaid', 120))).toMatchObject({ ok: true });
    const entry = (await accounts().findOne({ account_tag: 'postpaid' }))!.running_transactions[0];
    await processEndedCall(deps, {
      account_tag: 'postpaid',
      transaction_tag: 'x1',
      entry_id: entry.id,
      enqueued_at: new Date().toISOString(),
    });
    const rec = await recordOf('postpaid', 'x1');
    expect(rec).toMatchObject({ duration: 120, fee: 660n, state: 'charged' });
    expect(rec!.segments).toEqual([
      expect.objectContaining({ prefix: '39', from: 0, seconds: 60, fee: 60n, rate: 60, description: 'base', timing: null }),
      expect.objectContaining({ prefix: '39', from: 60, seconds: 60, fee: 600n, rate: 600, description: 'peak', timing: peak }),
    ]);
    expect(await balance('postpaid')).toBe(-660n);
  });

  it('recordTransaction rates a finished call the same way, at the prices in force when it started', async () => {
    expect(await run(record, jobs.record('r1', 'recorder', 120))).toMatchObject({ ok: true });
    expect(await recordOf('recorder', 'r1')).toMatchObject({ fee: 660n });
    expect(await balance('recorder')).toBe(-660n);
  });

  it('a call inside one window costs what the one-price formula gives, and its record has no segments', async () => {
    const inside = callJobs(Date.parse('2026-01-05T12:00:00Z'));
    expect(await run(record, inside.record('r2', 'recorder', 90))).toMatchObject({ ok: true });
    const rec = await recordOf('recorder', 'r2');
    expect(rec).toMatchObject({ fee: 90n });
    const atPeak = callJobs(Date.parse('2026-01-05T19:00:00Z'));
    expect(await run(record, atPeak.record('r3', 'recorder', 30))).toMatchObject({ ok: true });
    expect(await recordOf('recorder', 'r3')).toMatchObject({ fee: 300n });
  });

  it('authorization sizes a prepaid grant on the peak price that starts during the call, and a call cut there does not overdraw', async () => {
    const answer = await run(authorize, jobs.authorization(null, 'prepaid'));
    expect(answer.authorized).toBe(true);
    // Off-peak alone would grant 598 s (600 at 1 a second, less the 2 s headroom); from `soon` on, each
    // second costs 10. About 60 s off-peak, then (600 - 60) / 10 = 54 s of peak, less the headroom.
    expect(answer.max_available_units).toBeGreaterThanOrEqual(105);
    expect(answer.max_available_units).toBeLessThanOrEqual(120);
    // The call runs its whole grant plus the headroom, starting now, and is charged through processing.
    const now = Date.now();
    const live = callJobs(now);
    expect(await run(begin, live.begin('p1', 'prepaid'))).toMatchObject({ ok: true });
    expect(await run(end, live.end('p1', 'prepaid', answer.max_available_units! + 2))).toMatchObject({ ok: true });
    const entry = (await accounts().findOne({ account_tag: 'prepaid' }))!.running_transactions[0];
    await processEndedCall(deps, {
      account_tag: 'prepaid',
      transaction_tag: 'p1',
      entry_id: entry.id,
      enqueued_at: new Date().toISOString(),
    });
    const rec = await recordOf('prepaid', 'p1');
    expect(rec!.segments!.length).toBe(2);
    expect(await balance('prepaid')).toBeGreaterThanOrEqual(0n);
  });

  it('begin refuses a prepaid call that cannot pay its first charged increment at the price in force then', async () => {
    // Started at 17:59:50 with 30 free seconds, its first charged increment starts at 18:00:20, at the
    // peak (600 a minute, 60 s steps): 599 does not pay it, though the off-peak start price (60) would.
    const late = callJobs(Date.parse('2026-01-05T17:59:50Z'));
    expect(await run(begin, late.begin('s1', 'short'))).toMatchObject({ ok: false, reason: 'BALANCE_INSUFFICIENT' });
    expect((await accounts().findOne({ account_tag: 'short' }))!.running_transactions).toEqual([]);
    expect(await run(begin, late.begin('s1', 'enough'))).toMatchObject({ ok: true });
    // Ended within its free seconds: nothing to charge.
    expect(await run(end, late.end('s1', 'enough', 20))).toMatchObject({ ok: true });
  });

  it('the ledger audit stays exact', async () => {
    const report = await auditLedger(ctx.mongo.collections);
    expect(report.differences).toEqual([]);
  });
});
