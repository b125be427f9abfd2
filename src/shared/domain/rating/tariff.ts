import type { AccountType, ChargedSegment, RateSnapshot, RateTerms, TimedPrice, TimedPrices } from '../types';
import { computeFee } from './fee';
import { segmentedFee, segmentedMaxUnits, type PriceTimeline } from './segments';
import { normalizeTerms, termsOf } from './terms';
import { appliesBefore, copyTiming, edgesOf, nextBoundary, specificity, timingMatches, type Holidays } from './timing';
import { canAffordStart, maxAvailableUnits } from './units';

/**
 * The fee and the grant of a rate snapshot, whether it has one price or timed ones (issue 34). A
 * snapshot without `timed` is rated by the one-price formula, exactly as before timings; with `timed`,
 * per segment along its prices' timeline (segments.ts). Every place that rates a call or sizes a grant
 * comes through here: processing and records (callFee), the running cost of a call (feeAt),
 * authorization (grantUnits).
 */

/** The price of a timed rate in force at `at`: the most specific matching one; none matching, the call's start price. */
function priceAt(timed: TimedPrices, holidays: Holidays, startPrice: TimedPrice, at: number): TimedPrice {
  let best: TimedPrice | null = null;
  let bestRank = 0;
  for (const price of timed.prices) {
    const rank = specificity(price.timing);
    if (rank < bestRank || (best !== null && !appliesBefore(price.timing, rank, best.timing, bestRank))) continue;
    if (timingMatches(price.timing, at, timed.time_zone, holidays)) {
      best = price;
      bestRank = rank;
    }
  }
  return best ?? startPrice;
}

/** The timeline of a timed snapshot: its prices on its clock, each boundary where one may change. */
export function timelineOf(rate: RateSnapshot & { timed: TimedPrices }): PriceTimeline<TimedPrice> {
  const timed = rate.timed;
  const holidays: Holidays = new Set(timed.holidays);
  const startPrice = priceOf(rate);
  const edges = edgesOf(timed.prices.map((p) => p.timing));
  return {
    priceAt: (at) => priceAt(timed, holidays, startPrice, at),
    nextBoundary: (at) => nextBoundary(at, timed.time_zone, edges),
  };
}

function priceOf(rate: RateSnapshot): TimedPrice {
  return { ...termsOf(rate), timing: null, description: rate.description ?? null };
}

export function isTimed(rate: RateSnapshot): rate is RateSnapshot & { timed: TimedPrices } {
  return rate.timed !== undefined && rate.timed !== null && rate.timed.prices.length > 0;
}

export interface CallFee {
  fee: bigint;
  /** What each stretch was charged; null for a one-price rate (the record shows its rate only, as before). */
  segments: ChargedSegment[] | null;
}

/** The fee of a call of `seconds` that started at `start`, with its segments when the rate is timed. */
export function callFee(rate: RateSnapshot | null, start: Date, seconds: number): CallFee {
  if (rate === null) return { fee: 0n, segments: null };
  if (!isTimed(rate)) return { fee: computeFee(rate, seconds), segments: null };
  const rated = segmentedFee(start.getTime(), seconds, timelineOf(rate));
  return {
    fee: rated.fee,
    segments: rated.segments.map((s) => ({
      prefix: rate.prefix,
      from: s.from,
      seconds: s.seconds,
      fee: s.fee,
      rate: s.price.rate,
      rate_increment: s.price.rate_increment,
      interval_start: s.price.interval_start,
      description: s.price.description,
      timing: copyTiming(s.price.timing),
    })),
  };
}

/** The fee only (the running cost of a call, what a balance owes). */
export function feeAt(rate: RateTerms | RateSnapshot, start: Date, seconds: number): bigint {
  if ('prefix' in rate && isTimed(rate)) return segmentedFee(start.getTime(), seconds, timelineOf(rate)).fee;
  return computeFee(rate, seconds);
}

/**
 * Whether a prepaid call on `rate` starting at `start` may start: the available balance pays the connect
 * fee and its first charged increment (docs/DESIGN.md section 4), that increment at the price in force
 * when it starts. A timed rate's first charged second may fall in the next window (started at 17:59:50
 * with 30 free seconds, the first increment is the peak's), so it is rated on the timeline: the fee of a
 * call one second past `interval_start` is exactly the connect fee plus that one whole increment.
 */
export function canAffordStartAt(rate: RateSnapshot | null, start: Date, available: bigint): boolean {
  if (rate === null || !isTimed(rate)) return canAffordStart(rate, available);
  return feeAt(rate, start, Number(normalizeTerms(rate).intervalStart) + 1) <= available;
}

/**
 * The units authorization grants a party on `rate` for a call starting at `start`: exact across the
 * timed rate's boundaries (a prepaid call starting at 17:59 off-peak is sized on the peak price from
 * 18:00), else the one-price grant (units.ts).
 */
export function grantUnits(
  rate: RateSnapshot | null,
  start: Date,
  available: bigint,
  accountType: AccountType,
  cap: number,
  headroomSeconds: number,
): number {
  if (rate === null || !isTimed(rate) || accountType === 'POSTPAID')
    return maxAvailableUnits(rate, available, accountType, cap, headroomSeconds);
  return segmentedMaxUnits(start.getTime(), available, timelineOf(rate), cap, headroomSeconds);
}
