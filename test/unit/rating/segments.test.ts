import fc from 'fast-check';
import type { RateTerms } from '../../../src/shared/domain/types';
import { computeFee, maxAvailableUnits } from '../../../src/shared/domain/rating';
import { constantTimeline, segmentedFee, segmentedMaxUnits, type PriceTimeline } from '../../../src/shared/domain/rating/segments';
import { edgesOf, nextBoundary, timingMatches, type RateTiming } from '../../../src/shared/domain/rating/timing';

/**
 * Issue 34: a call that crosses a price boundary is rated per segment. The properties the authorization
 * grant and the customer rely on, over random prices, increments, boundaries and durations.
 */
const terms = fc.record({
  connect_fee: fc.integer({ min: 0, max: 50 }),
  rate: fc.integer({ min: 0, max: 600 }),
  rate_increment: fc.constantFrom(0, 1, 6, 30, 60),
  interval_start: fc.constantFrom(0, 0, 5, 30),
});

/** Prices alternating at fixed instants (ms from the call's start), as a timeline. */
function alternating(prices: RateTerms[], boundaries: number[], start: number): PriceTimeline<RateTerms> {
  const sorted = [...new Set(boundaries)].sort((a, b) => a - b).map((b) => start + b);
  const index = (at: number) => sorted.filter((b) => b <= at).length;
  return {
    priceAt: (at) => prices[index(at) % prices.length],
    nextBoundary: (at) => sorted.find((b) => b > at) ?? Number.MAX_SAFE_INTEGER,
  };
}

const START = Date.parse('2026-07-01T17:59:00Z');

describe('rating across boundaries', () => {
  it('a call inside one window costs what the one-rate formula gives', () => {
    fc.assert(
      fc.property(terms, fc.integer({ min: 0, max: 20_000 }), (t, seconds) => {
        expect(segmentedFee(START, seconds, constantTimeline(t)).fee).toBe(computeFee(t, seconds));
      }),
      { numRuns: 500 },
    );
  });

  it('the fee never decreases as the call grows, and the shares add up to it', () => {
    fc.assert(
      fc.property(
        fc.array(terms, { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 600_000 }), { maxLength: 6 }),
        fc.integer({ min: 0, max: 900 }),
        (prices, bounds, seconds) => {
          const timeline = alternating(prices, bounds, START);
          const now = segmentedFee(START, seconds, timeline);
          const more = segmentedFee(START, seconds + 1, timeline);
          expect(more.fee).toBeGreaterThanOrEqual(now.fee);
          expect(now.connectFee + now.segments.reduce((s, x) => s + x.fee, 0n)).toBe(now.fee);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never charges more than the charged seconds all at the dearest price met (and, with one increment length, than the whole call at it)', () => {
    fc.assert(
      fc.property(
        fc.array(terms, { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 600_000 }), { maxLength: 6 }),
        fc.integer({ min: 1, max: 900 }),
        (prices, bounds, seconds) => {
          const timeline = alternating(prices, bounds, START);
          const { fee, connectFee, segments } = segmentedFee(START, seconds, timeline);
          const dearest = Math.max(...segments.map((s) => s.price.rate), 0);
          const charged = segments.reduce((s, x) => s + x.seconds, 0);
          expect(fee).toBeLessThanOrEqual(connectFee + BigInt(Math.ceil((dearest * charged) / 60)));
          const increment = (t: RateTerms) => Math.max(t.rate_increment, 1);
          if (new Set(prices.map(increment)).size === 1 && new Set(prices.map((p) => p.interval_start)).size === 1) {
            const maxConnect = Math.max(...prices.map((p) => p.connect_fee));
            const whole = computeFee({ ...prices[0], connect_fee: maxConnect, rate: Math.max(...prices.map((p) => p.rate)) }, seconds);
            expect(fee).toBeLessThanOrEqual(whole);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a 31-day call across peak and off-peak windows rates in a step per boundary', () => {
    const peak: RateTerms = { connect_fee: 10, rate: 120, rate_increment: 60, interval_start: 0 };
    const offPeak: RateTerms = { connect_fee: 5, rate: 30, rate_increment: 1, interval_start: 0 };
    const window: RateTiming = { days: null, start: '08:00:00', end: '18:00:00', holidays: null };
    const edges = edgesOf([window]);
    let steps = 0;
    const timeline: PriceTimeline<RateTerms> = {
      priceAt: (at) => {
        steps += 1;
        return timingMatches(window, at, 'Europe/Rome') ? peak : offPeak;
      },
      nextBoundary: (at) => nextBoundary(at, 'Europe/Rome', edges),
    };
    const seconds = 31 * 86400;
    const { fee, segments } = segmentedFee(Date.parse('2026-03-01T00:00:00Z'), seconds, timeline);
    // Three boundaries a day (08:00, 18:00, midnight) and the DST change: about 94 steps, not 2.7 million.
    expect(steps).toBeLessThan(31 * 3 + 10);
    // 10 h of peak every local day (the DST day too), the rest off-peak; the connect fee is the start's (01:00 local: off-peak).
    const peakSeconds = segments.filter((s) => s.price === peak).reduce((n, s) => n + s.seconds, 0);
    expect(peakSeconds).toBe(31 * 10 * 3600);
    expect(fee).toBe(5n + BigInt(Math.ceil((120 * 31 * 10 * 3600 + 30 * (seconds - 31 * 10 * 3600)) / 60)));
  });

  it('max units: the largest grant whose call, cut up to the headroom late, still fits, across boundaries', () => {
    fc.assert(
      fc.property(
        fc.array(terms, { minLength: 1, maxLength: 3 }),
        fc.array(fc.integer({ min: 1, max: 3_600_000 }), { maxLength: 4 }),
        fc.bigInt({ min: 0n, max: 5000n }),
        fc.integer({ min: 0, max: 3 }),
        (prices, bounds, available, headroom) => {
          const timeline = alternating(prices, bounds, START);
          const cap = 7200;
          const u = segmentedMaxUnits(START, available, timeline, cap, headroom);
          const feeOf = (s: number) => segmentedFee(START, s, timeline).fee;
          if (u > 0) expect(feeOf(u + headroom)).toBeLessThanOrEqual(available);
          if (u < cap) expect(feeOf(u + 1 + headroom)).toBeGreaterThan(available);
          // One price all along: the one-rate grant of today.
          if (bounds.length === 0) expect(u).toBe(maxAvailableUnits(prices[0], available, 'PREPAID', cap, headroom));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a prepaid call starting at 17:59 at the off-peak price is not granted what peak would overdraw', () => {
    const offPeak: RateTerms = { connect_fee: 0, rate: 60, rate_increment: 1, interval_start: 0 };
    const peak: RateTerms = { connect_fee: 0, rate: 600, rate_increment: 1, interval_start: 0 };
    const window: RateTiming = { days: null, start: '18:00:00', end: '22:00:00', holidays: null };
    const timeline: PriceTimeline<RateTerms> = {
      priceAt: (at) => (timingMatches(window, at, 'UTC') ? peak : offPeak),
      nextBoundary: (at) => nextBoundary(at, 'UTC', edgesOf([window])),
    };
    const start = Date.parse('2026-07-01T17:59:00Z');
    // 600 available: off-peak alone would grant 598 s; the first 60 s cost 60, then 10 a second.
    const u = segmentedMaxUnits(start, 600n, timeline, 14400, 2);
    expect(u).toBe(112); // 60 + 10 x (114 - 60) = 600 with the 2 s of headroom
    expect(segmentedFee(start, u + 2, timeline).fee).toBeLessThanOrEqual(600n);
    expect(maxAvailableUnits(offPeak, 600n, 'PREPAID', 14400, 2)).toBe(598);
    // docs/RATING.md's example: 120 s from 17:59:00, a minute at each price.
    const { fee, segments } = segmentedFee(start, 120, timeline);
    expect(fee).toBe(660n);
    expect(segments.map((x) => [x.price.rate, x.from, x.seconds, x.fee])).toEqual([
      [60, 0, 60, 60n],
      [600, 60, 60, 600n],
    ]);
  });
});
