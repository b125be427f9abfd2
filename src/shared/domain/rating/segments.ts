import type { RateTerms } from '../types';
import { ceilDiv } from './fee';
import { largestFitting } from './units';
import { normalizeTerms } from './terms';
import { firstIndexAfter } from './sorted';

/**
 * Rating a call that crosses a price boundary (issue 34: peak and off-peak), each part at the price in
 * force during it. Pure: what applies when comes from `priceAt` and `nextBoundary`. The rules
 * (docs/RATING.md, "A call across a boundary"):
 * - the connect fee is charged once, that of the rate in force at the call's start;
 * - `interval_start` is counted from the call's start, with the start's rate: the first seconds cost
 *   only the connect fee;
 * - then increments are laid end to end from there. Each increment is charged whole at the rate in force
 *   when it starts, with that rate's own length: an increment that straddles a boundary belongs to where
 *   it began, so no increment is ever split or charged twice;
 * - fee = connect fee + ceil(sum over increments of rate x increment / 60): one rounding for the call.
 * So a call inside one window costs exactly what the one-rate formula gives (fee.ts), the fee never
 * decreases as the call grows (a second more adds an increment or nothing), and it never exceeds the
 * connect fee plus the charged seconds all at the dearest rate met. Rating takes a step per boundary
 * crossed (and per increment-length change), never per second.
 */

/** One stretch of a call at one price: its first charged second (from the call's start), how many it charges, at what. */
export interface Segment<P> {
  price: P;
  /** Second of the call (from its start) where this stretch's first increment starts. */
  from: number;
  /** Seconds charged here: whole increments, the last may run past the call's end. */
  seconds: number;
  /** This stretch's share of the fee; the shares add up to the fee less the connect fee. */
  fee: bigint;
}

export interface SegmentedFee<P> {
  fee: bigint;
  connectFee: bigint;
  segments: Array<Segment<P>>;
}

export interface PriceTimeline<P extends RateTerms> {
  /** The price in force at `at` (epoch ms). */
  priceAt(at: number): P;
  /** The first instant after `at` where the price may change. */
  nextBoundary(at: number): number;
}

/** The fee of a call of `seconds` (whole seconds, as billed) that started at `start` (epoch ms). */
export function segmentedFee<P extends RateTerms>(start: number, seconds: number, timeline: PriceTimeline<P>): SegmentedFee<P> {
  if (!Number.isSafeInteger(seconds) || seconds < 0)
    throw new RangeError(`duration must be a non-negative integer, got ${String(seconds)}`);
  if (seconds === 0) return { fee: 0n, connectFee: 0n, segments: [] };
  const first = timeline.priceAt(start);
  const firstTerms = normalizeTerms(first);
  const segments: Array<Segment<P>> = [];
  // rate (per minute) x seconds, summed over increments: divided by 60 and rounded up once at the end.
  let total = 0n;
  let pos = BigInt(firstTerms.intervalStart);
  const end = BigInt(seconds);
  while (pos < end) {
    const at = start + Number(pos) * 1000;
    const price = timeline.priceAt(at);
    const terms = normalizeTerms(price);
    // Increments starting before the boundary (or the call's end) are charged at this price.
    const boundaryMs = timeline.nextBoundary(at);
    const untilMs = BigInt(Math.max(boundaryMs - start, 0));
    const stop = untilMs < end * 1000n ? untilMs : end * 1000n;
    const span = stop - pos * 1000n;
    const count = span > 0n ? ceilDiv(span, terms.increment * 1000n) : 1n;
    const secs = count * terms.increment;
    const amount = terms.rate * secs;
    const last = segments[segments.length - 1];
    // The same price object: a timeline hands out one object per price, so two prices with equal terms
    // (a holiday price that costs what the base does) stay apart and the record names each stretch's.
    if (last && last.price === price) {
      last.seconds += Number(secs);
    } else {
      segments.push({ price, from: Number(pos), seconds: Number(secs), fee: 0n });
    }
    total += amount;
    pos += secs;
  }
  // Shares by cumulative rounding: each stretch gets what the running total's rounding adds, so the
  // shares add up to exactly the one rounding of the whole.
  let running = 0n;
  let before = 0n;
  for (const s of segments) {
    const t = normalizeTerms(s.price);
    running += t.rate * BigInt(s.seconds);
    const upTo = ceilDiv(running, 60n);
    s.fee = upTo - before;
    before = upTo;
  }
  return { fee: firstTerms.connectFee + ceilDiv(total, 60n), connectFee: firstTerms.connectFee, segments };
}

/** A timeline with one price all along: segmentedFee then equals the one-rate formula. */
export function constantTimeline<P extends RateTerms>(price: P): PriceTimeline<P> {
  return { priceAt: () => price, nextBoundary: () => Number.MAX_SAFE_INTEGER };
}

/**
 * The units authorization grants across boundaries: the largest u (0..cap) with
 * fee(u + headroom) <= available, the fee segmented from the call's start. The fee never decreases with
 * the duration, so a binary search is exact; each probe costs a step per boundary.
 */
export function segmentedMaxUnits<P extends RateTerms>(
  start: number,
  available: bigint,
  timeline: PriceTimeline<P>,
  cap: number,
  headroomSeconds: number,
): number {
  if (available < 0n) return 0;
  return largestFitting(cap, (u) => segmentedFee(start, u + headroomSeconds, timeline).fee <= available);
}

/**
 * The timeline read once from `from` to `until` (epoch ms): its prices and boundaries in an array, so
 * rating many calls over that stretch (every start of a ringing call, ringing.ts) costs a binary search
 * per probe instead of a reading of the clock (time zone, calendar) each. Outside it, the original.
 */
export function frozenTimeline<P extends RateTerms>(timeline: PriceTimeline<P>, from: number, until: number): PriceTimeline<P> {
  const starts: number[] = [];
  const prices: P[] = [];
  let at = from;
  for (; at <= until; at = timeline.nextBoundary(at)) {
    starts.push(at);
    prices.push(timeline.priceAt(at));
  }
  /** Where the last stretch ends: the first boundary past `until`. */
  const end = at;
  /** The index of the last stretch starting at or before `at` (-1: before `from`). */
  const stretch = (at: number) => firstIndexAfter(starts, at) - 1;
  return {
    priceAt: (at) => {
      const i = at > until ? -1 : stretch(at);
      return i < 0 ? timeline.priceAt(at) : prices[i];
    },
    nextBoundary: (at) => {
      const i = at > until ? -1 : stretch(at);
      if (i < 0) return timeline.nextBoundary(at);
      return i + 1 < starts.length ? starts[i + 1] : end;
    },
  };
}
