import fc from 'fast-check';
import { callFee, canAffordStartAt, computeFee, feeAt, grantUnits, RatingIndex, snapshotOf } from '../../../src/shared/domain/rating';
import type { CarrierDoc, PricelistRateDoc, RateSnapshot, RateTiming } from '../../../src/shared/domain/types';

/** Issue 34: rating a snapshot with timed prices (tariff.ts) and choosing timed rates in the index. */
const carrier: CarrierDoc = { _id: 'c1', carrier_tag: 'c1', host: 'h', port: 5060, protocol: 'UDP', active: true };
const rate = (overrides: Partial<PricelistRateDoc>): PricelistRateDoc => ({
  _id: `r${Math.random()}`,
  pricelist_tag: 'pl',
  carrier_tag: 'c1',
  prefix: '39',
  datetime_start: null,
  datetime_end: null,
  connect_fee: 0,
  rate: 60,
  rate_increment: 1,
  interval_start: 0,
  description: 'base',
  ...overrides,
});
const peak: RateTiming = { days: [1, 2, 3, 4, 5], start: '18:00:00', end: '22:00:00', holidays: null };
const holiday: RateTiming = { days: null, start: null, end: null, holidays: 'only' };
const MONDAY_1759 = new Date('2026-01-05T17:59:00Z');

function index(timeZones?: Map<string, string>, holidays?: string[]) {
  return RatingIndex.build(
    [
      rate({ description: 'base' }),
      rate({ rate: 600, description: 'peak', timing: peak, timing_key: 'peak' }),
      rate({ rate: 6, description: 'holiday', timing: holiday, timing_key: 'holiday' }),
    ],
    [carrier],
    { timeZones, holidays },
  );
}

const snapshotAt = (idx: RatingIndex, at: Date): RateSnapshot =>
  snapshotOf(idx.bestRate({ pricelistTags: ['pl'], destination: '391234', at })!.rate);

describe('timed rates in the rating index', () => {
  it('the most specific matching rate applies: base at 17:59, peak at 18:30 on a weekday, base at 18:30 on Saturday', () => {
    const idx = index();
    expect(snapshotAt(idx, MONDAY_1759).description).toBe('base');
    expect(snapshotAt(idx, new Date('2026-01-05T18:30:00Z')).description).toBe('peak');
    expect(snapshotAt(idx, new Date('2026-01-10T18:30:00Z')).description).toBe('base');
  });

  it('a holiday rate wins over the weekday peak on a holiday date, read on the pricelist clock', () => {
    const idx = index(undefined, ['2026-01-05']);
    expect(snapshotAt(idx, new Date('2026-01-05T18:30:00Z')).description).toBe('holiday');
    // In Asia/Tokyo (UTC+9), 2026-01-05 18:30 UTC is already 2026-01-06 03:30: no holiday, no peak.
    const tokyo = index(new Map([['pl', 'Asia/Tokyo']]), ['2026-01-05']);
    expect(snapshotAt(tokyo, new Date('2026-01-05T18:30:00Z')).description).toBe('base');
  });

  it('west of UTC, a holiday window that wraps past midnight is kept in the snapshot the day after the holiday', () => {
    // Christmas 18:00 to 17:59:59 the next day, Los Angeles time, at 6 a minute; base 60. The call starts
    // on 12-26 at 16:30 PST (12-27 00:30 UTC), inside the window that began on the holiday.
    const wrap: RateTiming = { days: null, start: '18:00:00', end: '17:59:59', holidays: 'only' };
    const idx = RatingIndex.build([rate({}), rate({ rate: 6, description: 'holiday', timing: wrap, timing_key: 'h' })], [carrier], {
      timeZones: new Map([['pl', 'America/Los_Angeles']]),
      holidays: ['2025-12-25'],
    });
    const at = new Date('2025-12-27T00:30:00Z');
    const snap = snapshotAt(idx, at);
    expect(snap.description).toBe('holiday');
    expect(snap.timed!.holidays).toContain('2025-12-25');
    expect(callFee(snap, at, 600).fee).toBe(60n);
  });

  it('a snapshot keeps every price of its prefix and carrier, so the call is rated per segment', () => {
    const snap = snapshotAt(index(), MONDAY_1759);
    expect(snap.timed!.prices.map((p) => p.description).sort()).toEqual(['base', 'holiday', 'peak']);
    expect(callFee(snap, MONDAY_1759, 120)).toMatchObject({ fee: 660n });
  });

  it('two matching timings of one rank are chosen alike whatever order the store returns them in', () => {
    // Weekdays all day at 20 and weekdays 08:00-18:00 at 30, both match Monday 10:00: the narrower (with a
    // window) applies, and the fee does not depend on which document MongoDB returned first.
    const weekday: RateTiming = { days: [1, 2, 3, 4, 5], start: null, end: null, holidays: null };
    const office: RateTiming = { days: [1, 2, 3, 4, 5], start: '08:00:00', end: '18:00:00', holidays: null };
    const rates = [
      rate({ description: 'base', rate: 10 }),
      rate({ rate: 20, description: 'weekday', timing: weekday, timing_key: 'weekday' }),
      rate({ rate: 30, description: 'office', timing: office, timing_key: 'office' }),
    ];
    const monday10 = new Date('2026-01-05T10:00:00Z');
    for (const order of [rates, [rates[0], rates[2], rates[1]], [...rates].reverse()]) {
      const snap = snapshotAt(RatingIndex.build(order, [carrier]), monday10);
      expect(snap.description).toBe('office');
      expect(callFee(snap, monday10, 60).fee).toBe(30n);
      // Per segment too: 17:59 to 18:01 is one minute at the office price, one at the weekday price.
      const late = new Date('2026-01-05T17:59:00Z');
      expect(callFee(snapshotAt(RatingIndex.build(order, [carrier]), late), late, 120).fee).toBe(50n);
    }
    // A narrower window of one rank written on top of a wider one applies inside it: a lunch peak.
    const lunch: RateTiming = { days: [1, 2, 3, 4, 5], start: '12:00:00', end: '14:00:00', holidays: null };
    const day: RateTiming = { days: [1, 2, 3, 4, 5], start: '08:00:00', end: '20:00:00', holidays: null };
    const monday13 = new Date('2026-01-05T13:00:00Z');
    for (const order of [
      [
        rate({}),
        rate({ rate: 20, description: 'day', timing: day, timing_key: 'day' }),
        rate({ rate: 90, description: 'lunch', timing: lunch, timing_key: 'lunch' }),
      ],
      [
        rate({}),
        rate({ rate: 90, description: 'lunch', timing: lunch, timing_key: 'lunch' }),
        rate({ rate: 20, description: 'day', timing: day, timing_key: 'day' }),
      ],
    ]) {
      const snap = snapshotAt(RatingIndex.build(order, [carrier]), monday13);
      expect(snap.description).toBe('lunch');
      // 13:59 for two minutes: one at lunch, one at the day price.
      const at = new Date('2026-01-05T13:59:00Z');
      expect(callFee(snapshotAt(RatingIndex.build(order, [carrier]), at), at, 120).fee).toBe(110n);
    }
    // Two windows of one rank and width that overlap: the choice is the same in every order (by the timing's form).
    const morning: RateTiming = { days: [1, 2, 3, 4, 5], start: '09:00:00', end: '19:00:00', holidays: null };
    const fees = [
      [rate({}), rate({ rate: 20, timing: office, timing_key: 'office' }), rate({ rate: 40, timing: morning, timing_key: 'morning' })],
      [rate({}), rate({ rate: 40, timing: morning, timing_key: 'morning' }), rate({ rate: 20, timing: office, timing_key: 'office' })],
    ].map((order) => callFee(snapshotAt(RatingIndex.build(order, [carrier]), monday10), monday10, 60).fee);
    expect(fees[0]).toBe(fees[1]);
  });

  it('an index without timed rates gives snapshots without `timed`, rated exactly as before', () => {
    const idx = RatingIndex.build([rate({})], [carrier]);
    const snap = snapshotAt(idx, MONDAY_1759);
    expect(snap.timed).toBeUndefined();
    expect(callFee(snap, MONDAY_1759, 120)).toEqual({ fee: 120n, segments: null });
  });
});

describe('tariff: fee and grant of a snapshot', () => {
  const snap = snapshotAt(index(), MONDAY_1759);

  it('property: the fee never decreases with the duration, and feeAt agrees with callFee', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4 * 3600 }), fc.integer({ min: 0, max: 600 }), (seconds, more) => {
        const a = callFee(snap, MONDAY_1759, seconds).fee;
        expect(callFee(snap, MONDAY_1759, seconds + more).fee).toBeGreaterThanOrEqual(a);
        expect(feeAt(snap, MONDAY_1759, seconds)).toBe(a);
      }),
    );
  });

  it('property: the grant is the largest duration whose fee, with the headroom, fits the balance', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 50_000n }), fc.integer({ min: 0, max: 3 }), (available, headroom) => {
        const units = grantUnits(snap, MONDAY_1759, available, 'PREPAID', 14_400, headroom);
        if (units > 0) expect(callFee(snap, MONDAY_1759, units + headroom).fee).toBeLessThanOrEqual(available);
        if (units < 14_400) expect(callFee(snap, MONDAY_1759, units + 1 + headroom).fee).toBeGreaterThan(available);
      }),
    );
  });

  it('the segments and the connect fee add up to the fee', () => {
    const withConnect: RateSnapshot = {
      ...snap,
      connect_fee: 7,
      timed: { ...snap.timed!, prices: snap.timed!.prices.map((p) => ({ ...p, connect_fee: 7 })) },
    };
    const { fee, segments } = callFee(withConnect, MONDAY_1759, 3 * 3600);
    expect(segments!.reduce((sum, s) => sum + s.fee, 7n)).toBe(fee);
    expect(segments!.map((s) => s.description)).toEqual(['base', 'peak']);
  });

  it('a price without a timing that never matches leaves the start price in force (no free gap)', () => {
    const onlyPeak = RatingIndex.build([rate({ rate: 600, description: 'peak', timing: peak, timing_key: 'peak' })], [carrier]);
    const at = new Date('2026-01-05T21:59:00Z');
    const s = snapshotAt(onlyPeak, at);
    // From 22:00 no price matches: the call goes on at the price it started with.
    expect(callFee(s, at, 120).fee).toBe(computeFee(s, 120));
  });
});

describe('tariff: what a record shows, and whether a call may start', () => {
  it('a stretch at another price with the same terms is its own segment, named after that price', () => {
    // The holiday price costs what the base costs: the fee is the same either way, but the record must
    // say that the second minute went at the holiday price (docs/RATING.md, "A call across a boundary").
    const idx = RatingIndex.build(
      [rate({ description: 'base' }), rate({ description: 'holiday', timing: holiday, timing_key: 'holiday' })],
      [carrier],
      { holidays: ['2026-01-06'] },
    );
    const start = new Date('2026-01-05T23:59:00Z');
    const charged = callFee(snapshotAt(idx, start), start, 120);
    expect(charged.fee).toBe(120n);
    expect(charged.segments!.map((s) => [s.from, s.seconds, s.description])).toEqual([
      [0, 60, 'base'],
      [60, 60, 'holiday'],
    ]);
  });

  it('a call may start only if it pays its first charged increment at the price in force then', () => {
    // Off-peak 60/min in 60 s steps, the first 30 s free; the peak (600/min) from 18:00. Started at
    // 17:59:50, its first charged increment starts at 18:00:20, at the peak: 600, not 60.
    const idx = RatingIndex.build(
      [
        rate({ description: 'base', rate_increment: 60, interval_start: 30 }),
        rate({ rate: 600, description: 'peak', timing: peak, timing_key: 'peak', rate_increment: 60, interval_start: 30 }),
      ],
      [carrier],
    );
    const start = new Date('2026-01-05T17:59:50Z');
    const snap = snapshotAt(idx, start);
    expect(feeAt(snap, start, 31)).toBe(600n);
    expect(canAffordStartAt(snap, start, 599n)).toBe(false);
    expect(canAffordStartAt(snap, start, 600n)).toBe(true);
    // Ten minutes earlier the whole first increment is off-peak.
    const early = new Date('2026-01-05T17:49:50Z');
    expect(canAffordStartAt(snapshotAt(idx, early), early, 60n)).toBe(true);
    expect(canAffordStartAt(null, start, 0n)).toBe(true);
  });

  it('property: a call may start exactly when the fee of its first charged second fits', () => {
    const idx = index();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 7 * 86400 }), fc.bigInt({ min: 0n, max: 2000n }), (offset, money) => {
        const start = new Date(MONDAY_1759.getTime() + offset * 1000);
        const snap = snapshotAt(idx, start);
        expect(canAffordStartAt(snap, start, money)).toBe(feeAt(snap, start, (snap.interval_start ?? 0) + 1) <= money);
      }),
    );
  });
});
