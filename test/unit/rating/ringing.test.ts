import fc from 'fast-check';
import { canAffordStartAt, feeAt, grantUnits, RatingIndex, snapshotOf } from '../../../src/shared/domain/rating';
import { dearestFeeWhileRinging, grantWhileRinging, type AnswerWindow } from '../../../src/shared/domain/rating/ringing';
import type { CarrierDoc, PricelistRateDoc, RateSnapshot, RateTiming } from '../../../src/shared/domain/types';

/**
 * A call is rated from its answer, which may come any time in its ringing window after authorization:
 * the grant must hold for every start in it (ringing.ts; docs/AGENT.md, "The grant holds for every
 * instant the call may be answered at"). Checked against the brute force over every whole second and
 * at random instants to the millisecond, over random prices, windows and increments.
 */
const carrier: CarrierDoc = { _id: 'c1', carrier_tag: 'c1', host: 'h', port: 5060, protocol: 'UDP', active: true };
type Terms = Pick<PricelistRateDoc, 'connect_fee' | 'rate' | 'rate_increment' | 'interval_start'>;
const doc = (n: number, terms: Terms, timing: RateTiming | null): PricelistRateDoc => ({
  _id: `r${n}`,
  pricelist_tag: 'pl',
  carrier_tag: 'c1',
  prefix: '39',
  datetime_start: null,
  datetime_end: null,
  description: `price ${n}`,
  ...terms,
  ...(timing ? { timing, timing_key: `t${n}` } : {}),
});

function snapshotOfPrices(base: Terms, timed: Array<{ terms: Terms; timing: RateTiming }>, at: Date): RateSnapshot {
  const index = RatingIndex.build([doc(0, base, null), ...timed.map((t, i) => doc(i + 1, t.terms, t.timing))], [carrier]);
  return snapshotOf(index.bestRate({ pricelistTags: ['pl'], destination: '391234', at })!.rate);
}

const terms = fc.record({
  connect_fee: fc.integer({ min: 0, max: 30 }),
  rate: fc.integer({ min: 0, max: 600 }),
  rate_increment: fc.constantFrom(1, 6, 30, 60),
  interval_start: fc.constantFrom(0, 0, 5, 30),
});
const hhmmss = (ms: number) => new Date(ms).toISOString().slice(11, 19);
/** A daily window starting and ending within a few minutes of 18:00 UTC, so calls cross it. */
const nearSix = Date.parse('2026-07-01T18:00:00Z');
const timing = fc.tuple(fc.integer({ min: -180, max: 180 }), fc.integer({ min: 1, max: 600 })).map(([from, length]): RateTiming => ({
  days: null,
  start: hhmmss(nearSix + from * 1000),
  end: hhmmss(nearSix + (from + length) * 1000),
  holidays: null,
}));

/** One or two timed prices beside the base. */
const timedPrices = fc.array(fc.record({ terms, timing }), { minLength: 1, maxLength: 2 });
/** When the call is authorized: ms from 18:00, four minutes before to two after. */
const authorizedAt = fc.integer({ min: -240_000, max: 120_000 });

/** Every whole-second start in the window, the brute force the grant must equal. */
function wholeSeconds(window: AnswerWindow): Date[] {
  const out: Date[] = [];
  const first = Math.floor(window.from.getTime() / 1000) * 1000;
  for (let s = first; s <= window.to.getTime(); s += 1000) out.push(new Date(s));
  return out;
}

const CAP = 3600;

describe('the grant while the call rings', () => {
  it('is the least, over every whole second the call may be answered at, of the grant for a call starting then', () => {
    fc.assert(
      fc.property(
        terms,
        timedPrices,
        authorizedAt,
        fc.integer({ min: 0, max: 20 }),
        fc.bigInt({ min: 0n, max: 3000n }),
        fc.integer({ min: 0, max: 3 }),
        (base, timed, offset, ringing, money, headroom) => {
          const from = new Date(nearSix + offset);
          const window = { from, to: new Date(from.getTime() + ringing * 1000) };
          const rate = snapshotOfPrices(base, timed, from);
          const u = grantWhileRinging(rate, window, money, 'PREPAID', CAP, headroom);
          // The snapshot begin would take at each start (its price then decides whether the call may start).
          const each = wholeSeconds(window).map((s) => {
            const then = snapshotOfPrices(base, timed, s);
            return canAffordStartAt(then, s, money) ? grantUnits(then, s, money, 'PREPAID', CAP, headroom) : 0;
          });
          expect(u).toBe(Math.min(...each));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a call answered at any instant of the window, to the millisecond, and cut at the grant plus the headroom, costs at most the money', () => {
    fc.assert(
      fc.property(
        terms,
        timedPrices,
        authorizedAt,
        fc.integer({ min: 0, max: 90_000 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 8 }),
        fc.bigInt({ min: 0n, max: 3000n }),
        (base, timed, offset, ringingMs, picks, money) => {
          const from = new Date(nearSix + offset);
          const window = { from, to: new Date(from.getTime() + ringingMs) };
          const rate = snapshotOfPrices(base, timed, from);
          const u = grantWhileRinging(rate, window, money, 'PREPAID', CAP, 2);
          if (u === 0) return;
          for (const pick of picks) {
            const start = new Date(from.getTime() + Math.floor(pick * ringingMs));
            expect(canAffordStartAt(snapshotOfPrices(base, timed, start), start, money)).toBe(true);
            expect(feeAt(rate, start, u + 2)).toBeLessThanOrEqual(money);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a window of one instant, a one-price rate and a postpaid account grant what a call starting at authorization does', () => {
    fc.assert(
      fc.property(terms, fc.record({ terms, timing }), authorizedAt, fc.bigInt({ min: -5n, max: 3000n }), (base, peak, offset, money) => {
        const from = new Date(nearSix + offset);
        const timedRate = snapshotOfPrices(base, [peak], from);
        const today = (rate: RateSnapshot) => (canAffordStartAt(rate, from, money) ? grantUnits(rate, from, money, 'PREPAID', CAP, 2) : 0);
        expect(grantWhileRinging(timedRate, { from, to: from }, money, 'PREPAID', CAP, 2)).toBe(today(timedRate));
        const onePrice = snapshotOfPrices(base, [], from);
        const ringing = { from, to: new Date(from.getTime() + 60_000) };
        expect(grantWhileRinging(onePrice, ringing, money, 'PREPAID', CAP, 2)).toBe(today(onePrice));
        expect(grantWhileRinging(timedRate, ringing, money, 'POSTPAID', CAP, 2)).toBe(CAP);
      }),
      { numRuns: 150 },
    );
  });

  it('the dearest fee over the window is the most any start in it costs', () => {
    fc.assert(
      fc.property(
        terms,
        timedPrices,
        authorizedAt,
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 900 }),
        (base, timed, offset, ringing, seconds) => {
          const from = new Date(nearSix + offset);
          const window = { from, to: new Date(from.getTime() + ringing * 1000) };
          const rate = snapshotOfPrices(base, timed, from);
          const each = wholeSeconds(window).map((s) => feeAt(rate, s, seconds));
          expect(dearestFeeWhileRinging(rate, window, seconds)).toBe(each.reduce((a, b) => (b > a ? b : a), 0n));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('authorized at 17:59:30 with 600, off-peak 60 a minute and peak 600 from 18:00: 58 s, what a call answered at 18:00 can pay', () => {
    const second = { connect_fee: 0, rate_increment: 1, interval_start: 0 };
    const from = new Date('2026-07-01T17:59:30Z');
    const rate = snapshotOfPrices(
      { ...second, rate: 60 },
      [{ terms: { ...second, rate: 600 }, timing: { days: null, start: '18:00:00', end: '22:00:00', holidays: null } }],
      from,
    );
    // Answered at once, 30 s off-peak (30) then (600 - 30) / 10 = 57 s of peak: 87, less the headroom.
    expect(grantUnits(rate, from, 600n, 'PREPAID', 14400, 2)).toBe(85);
    // Answered at 18:00:00, within the 60 s of ringing: 60 s of peak, less the headroom.
    const window = { from, to: new Date(from.getTime() + 60_000) };
    expect(grantWhileRinging(rate, window, 600n, 'PREPAID', 14400, 2)).toBe(58);
    expect(feeAt(rate, new Date('2026-07-01T18:00:00Z'), 58 + 2)).toBe(600n);
    expect(dearestFeeWhileRinging(rate, window, 60)).toBe(600n);
  });

  it('the index names the instants of the ringing time where a route may be priced otherwise: a version starting or ending, a time-of-day edge at any prefix of the number', () => {
    // A day to come: the index keeps only the validity edges after it was built.
    const day = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    const from = new Date(`${day}T17:59:30Z`);
    const to = new Date(`${day}T18:00:30Z`);
    const within = new Date(`${day}T18:00:10Z`);
    const later = new Date(`${day}T18:10:00Z`);
    const six = new Date(`${day}T18:00:00Z`);
    const base: Terms = { connect_fee: 0, rate: 60, rate_increment: 1, interval_start: 0 };
    const versioned = (pricelist: string, edge: Date): PricelistRateDoc => ({
      ...doc(0, base, null),
      _id: pricelist,
      pricelist_tag: pricelist,
      datetime_start: edge,
      previous_versions: [{ ...base, datetime_start: null, datetime_end: edge, description: 'old' }],
    });
    const index = RatingIndex.build(
      [
        versioned('soon', within),
        versioned('later', later),
        { ...doc(1, base, null), pricelist_tag: 'plain' },
        { ...doc(2, base, null), pricelist_tag: 'timed' },
        // A timing on a longer prefix: it decides which prefix is in force, so its edges count.
        { ...doc(3, base, { days: null, start: '18:00:00', end: '19:00:00', holidays: null }), pricelist_tag: 'timed', prefix: '3912' },
      ],
      [carrier],
    );
    const at = (...instants: Date[]) => instants.map((d) => d.toISOString());
    const changes = (lists: string[], number = '39123', f = from, t = to) => at(...index.routeChangesBetween(lists, number, f, t));
    expect(changes(['soon'])).toEqual(at(within));
    expect(changes(['later'])).toEqual([]);
    expect(changes(['later'], '39123', new Date(later.getTime() - 10_000), new Date(later.getTime() + 50_000))).toEqual(at(later));
    expect(changes(['plain', 'missing'])).toEqual([]);
    expect(changes(['plain', 'timed'])).toEqual(at(six));
    // A number the timed prefix does not reach: nothing changes for it.
    expect(changes(['timed'], '3945')).toEqual([]);
    expect(changes(['soon', 'timed'])).toEqual(at(six, within));
  });

  it("each start is checked at its own price's free seconds: a day price with 60 free seconds ending at 18:00 does not refuse a call answered after it", () => {
    // Day (08:00-18:00): 60 a minute with 60 s free; base: 60 a minute, none free. 30 available,
    // authorized at 17:59:30: answered at 18:00 on the base price, 28 s (30 less the headroom) fit.
    const day = { connect_fee: 0, rate: 60, rate_increment: 1, interval_start: 60 };
    const from = new Date('2026-06-03T17:59:30Z');
    const rate = snapshotOfPrices(
      { connect_fee: 0, rate: 60, rate_increment: 1, interval_start: 0 },
      [{ terms: day, timing: { days: null, start: '08:00:00', end: '18:00:00', holidays: null } }],
      from,
    );
    const window = { from, to: new Date(from.getTime() + 60_000) };
    expect(grantWhileRinging(rate, window, 30n, 'PREPAID', 14400, 2)).toBe(28);
  });
});
