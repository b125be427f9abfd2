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
  /**
   * Boundaries from now (UTC), for authorization, which sizes the grant from the present: `soon` past the
   * ringing time (RESERVATION_SECONDS, 60 s) of any authorization this file makes, `ringing` within it.
   */
  const loaded = Math.ceil(Date.now() / 1000) * 1000;
  const soon = new Date(loaded + 150_000);
  const ringing = new Date(loaded + 40_000);
  const hhmmss = (d: Date) => d.toISOString().slice(11, 19);
  const peakFrom = (d: Date) => ({ days: null, start: hhmmss(d), end: hhmmss(new Date(d.getTime() + 2 * 3_600_000)), holidays: null });
  const soonWindow = peakFrom(soon);

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      carriers: [carrier('c1')],
      pricelists: [pricelist('pl'), pricelist('soon'), pricelist('ringing'), pricelist('repriced'), pricelist('steps'), pricelist('gap')],
      rates: [
        rate('pl', 'c1', '39', { rate: 60, rate_increment: 1, description: 'base' }),
        rate('pl', 'c1', '39', { rate: 600, rate_increment: 1, description: 'peak', timing: peak, timing_key: 'peak' }),
        rate('soon', 'c1', '39', { rate: 60, rate_increment: 1, description: 'base' }),
        rate('soon', 'c1', '39', { rate: 600, rate_increment: 1, description: 'peak', timing: soonWindow, timing_key: 'soon' }),
        rate('ringing', 'c1', '39', { rate: 60, rate_increment: 1, description: 'base' }),
        rate('ringing', 'c1', '39', {
          rate: 600,
          rate_increment: 1,
          description: 'peak',
          timing: peakFrom(ringing),
          timing_key: 'ringing',
        }),
        // A new price (a rate deck's) taking effect while a call authorized now may still ring.
        rate('repriced', 'c1', '39', {
          rate: 600,
          rate_increment: 1,
          datetime_start: ringing,
          description: 'new price',
          previous_versions: [
            {
              datetime_start: null,
              datetime_end: ringing,
              connect_fee: 0,
              rate: 60,
              rate_increment: 1,
              interval_start: 0,
              description: 'old price',
            },
          ],
        }),
        // 3912 at 60 a minute all day but the one second `ringing` (its end is exclusive, so a deck writing
        // 17:59:59 as an inclusive end leaves such a gap), where the longest prefix in force is 39's 600.
        rate('gap', 'c1', '39', { rate: 600, rate_increment: 1, description: 'country' }),
        rate('gap', 'c1', '3912', {
          rate: 60,
          rate_increment: 1,
          description: 'city',
          timing: { days: null, start: hhmmss(new Date(ringing.getTime() + 1000)), end: hhmmss(ringing), holidays: null },
          timing_key: 'city',
        }),
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
        account('answered-late', { balance: 600n, pricelist_tags: ['ringing'] }),
        account('repriced', { balance: 600n, pricelist_tags: ['repriced'] }),
        account('limited', { type: 'POSTPAID', balance: 0n, daily_spend_limit: 600n, pricelist_tags: ['ringing'] }),
        account('gapped', { balance: 600n, pricelist_tags: ['gap'] }),
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

  it('authorization sizes a prepaid grant on the peak price that starts during the call, and a call answered as late as its ringing allows and cut there does not overdraw', async () => {
    const authorizedAt = Date.now();
    const answer = await run(authorize, jobs.authorization(null, 'prepaid'));
    expect(answer.authorized).toBe(true);
    // Off-peak alone would grant 598 s (600 at 1 a second, less the 2 s headroom); from `soon` on, each
    // second costs 10. The dearest answer is the latest, 60 s after authorization: about 85 s off-peak
    // from there, then (600 - 85) / 10 = 51 s of peak, less the headroom.
    expect(answer.max_available_units).toBeGreaterThanOrEqual(110);
    expect(answer.max_available_units).toBeLessThanOrEqual(160);
    // Answered at the end of the ringing time, run for its whole grant plus the headroom, charged through processing.
    const live = callJobs(Math.floor((authorizedAt + 60_000) / 1000) * 1000);
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

  it('the grant holds for a call answered at a peak that starts while it rings: 58 s, not the 90 s a call answered at once could last', async () => {
    // Precondition: the peak starts within this authorization's ringing time (60 s), not before it.
    expect(Date.now()).toBeLessThan(ringing.getTime() - 5_000);
    const answer = await run(authorize, jobs.authorization(null, 'answered-late'));
    expect(answer).toMatchObject({ authorized: true, max_available_units: 58 });
    // Answered at the peak's first second and cut at the grant plus the headroom: 60 s at 10 a second.
    const atPeak = callJobs(ringing.getTime());
    expect(await run(begin, atPeak.begin('late1', 'answered-late'))).toMatchObject({ ok: true });
    expect(await run(end, atPeak.end('late1', 'answered-late', 58 + 2))).toMatchObject({ ok: true });
    const entry = (await accounts().findOne({ account_tag: 'answered-late' }))!.running_transactions[0];
    await processEndedCall(deps, {
      account_tag: 'answered-late',
      transaction_tag: 'late1',
      entry_id: entry.id,
      enqueued_at: new Date().toISOString(),
    });
    expect(await recordOf('answered-late', 'late1')).toMatchObject({ fee: 600n });
    expect(await balance('answered-late')).toBe(0n);
  });

  it('and for a shorter prefix that applies for a moment of the ringing time (a gap in the longer prefix timings)', async () => {
    expect(Date.now()).toBeLessThan(ringing.getTime() - 5_000);
    const job = jobs.authorization(null, 'gapped');
    const answer = await run(authorize, { ...job, destination: '39123456' });
    // 3912 alone would grant 598 s; answered in the gap, the call is rated on 39 at 10 a second.
    expect(answer).toMatchObject({ authorized: true, max_available_units: 58 });
    const inGap = callJobs(ringing.getTime());
    const beginJob = { ...inGap.begin('gap1', 'gapped'), destination: '39123456' };
    expect(await run(begin, beginJob)).toMatchObject({ ok: true });
    expect(await run(end, inGap.end('gap1', 'gapped', 58 + 2))).toMatchObject({ ok: true });
    const entry = (await accounts().findOne({ account_tag: 'gapped' }))!.running_transactions[0];
    expect(entry.rate).toMatchObject({ prefix: '39', rate: 600 });
    await processEndedCall(deps, {
      account_tag: 'gapped',
      transaction_tag: 'gap1',
      entry_id: entry.id,
      enqueued_at: new Date().toISOString(),
    });
    expect(await balance('gapped')).toBe(0n);
  });

  it('so does it for a new rate version that takes effect while the call rings', async () => {
    expect(Date.now()).toBeLessThan(ringing.getTime() - 5_000);
    const answer = await run(authorize, jobs.authorization(null, 'repriced'));
    // The old price alone would grant 598 s; answered once the new one applies, 60 s cost 600.
    expect(answer).toMatchObject({ authorized: true, max_available_units: 58 });
    const atNewPrice = callJobs(ringing.getTime());
    expect(await run(begin, atNewPrice.begin('rp1', 'repriced'))).toMatchObject({ ok: true });
    expect(await run(end, atNewPrice.end('rp1', 'repriced', 58 + 2))).toMatchObject({ ok: true });
    const entry = (await accounts().findOne({ account_tag: 'repriced' }))!.running_transactions[0];
    await processEndedCall(deps, {
      account_tag: 'repriced',
      transaction_tag: 'rp1',
      entry_id: entry.id,
      enqueued_at: new Date().toISOString(),
    });
    expect(await balance('repriced')).toBe(0n);
  });

  it('a daily spend limit is held for the dearest answer the ringing time allows', async () => {
    expect(Date.now()).toBeLessThan(ringing.getTime() - 5_000);
    const answer = await run(authorize, jobs.authorization('lim1', 'limited'));
    expect(answer).toMatchObject({ authorized: true, max_available_units: 58 });
    const [reservation] = (await accounts().findOne({ account_tag: 'limited' }))!.running_transactions;
    // 58 s and the 2 s of headroom, answered at the peak: 600, the whole limit.
    expect(reservation.hold).toBe(600n);
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
