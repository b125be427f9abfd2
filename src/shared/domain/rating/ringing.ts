import type { AccountType, RateSnapshot, TimedPrices } from '../types';
import { largestFitting } from './units';
import { frozenTimeline, segmentedFee } from './segments';
import { canAffordStartAt, feeAt, grantUnits, isTimed, timelineOf } from './tariff';
import { normalizeTerms } from './terms';

/**
 * A call is rated from its answer, and its phone rings for a while after authorization sized its grant
 * (docs/AGENT.md, "The grant holds for every instant the call may be answered at"). With one price all
 * day that changes nothing; with timed prices (a peak from 18:00), a call authorized at 17:59:30 and
 * answered at 18:00:10 is rated at the peak from its first second. So the grant is the least, over every
 * instant the call may be answered at, of the grant for a call starting then: the dearest start decides,
 * as the dearest carrier does (authorization.ts).
 *
 * Exact by trying every whole second: a call's fee depends on its start only through the whole second
 * it falls in, because boundaries fall on whole seconds and increments are whole seconds from the start
 * (an increment starting at s + k seconds is at or past a boundary b exactly when floor(s) + k seconds
 * is). A ringing time of 60 s is 61 starts; each costs one fee probe unless it lowers the grant, and
 * none is tried when no boundary falls within reach of the call (the common case: one fee search).
 */

/** The instants a call may be answered at: from its authorization to the end of its reservation. */
export interface AnswerWindow {
  from: Date;
  to: Date;
}

const SECOND = 1000;
const floorSecond = (ms: number) => Math.floor(ms / SECOND) * SECOND;

/**
 * The first and last whole-second starts of `window`, and the timed rate's prices read once over the
 * reach of a call of up to `seconds` from any of them.
 */
function startsOf(rate: RateSnapshot & { timed: TimedPrices }, window: AnswerWindow, seconds: number) {
  const first = floorSecond(window.from.getTime());
  const last = Math.max(first, floorSecond(window.to.getTime()));
  return { first, last, timeline: frozenTimeline(timelineOf(rate), first, last + (seconds + 1) * SECOND) };
}

/**
 * The units to grant a party with `money` (its available balance, or the room its spend limits leave,
 * read as prepaid) on `rate`, whenever in `window` the call is answered: the least over those starts of
 * what a call starting then may last (0 where it may not start at all: a prepaid start needs its connect
 * fee and first charged increment, tariff.ts).
 */
export function grantWhileRinging(
  rate: RateSnapshot | null,
  window: AnswerWindow,
  money: bigint,
  accountType: AccountType,
  cap: number,
  headroomSeconds: number,
): number {
  const at = (start: Date) =>
    accountType === 'PREPAID' && !canAffordStartAt(rate, start, money)
      ? 0
      : grantUnits(rate, start, money, accountType, cap, headroomSeconds);
  if (rate === null || !isTimed(rate) || accountType === 'POSTPAID' || money < 0n) return at(window.from);
  const { first, last, timeline } = startsOf(rate, window, cap + headroomSeconds);
  const fits = (start: number, seconds: number) => segmentedFee(start, seconds, timeline).fee <= money;
  // The call may start if it pays its first charged increment, past the free seconds of the price in
  // force at its start (what begin checks on the snapshot it takes then), not of the price at authorization.
  const toStart = (start: number) => Number(normalizeTerms(timeline.priceAt(start)).intervalStart) + 1;
  let units = cap;
  for (let start = first; start <= last; start += SECOND) {
    if (!fits(start, toStart(start))) return 0;
    if (!fits(start, units + headroomSeconds)) units = largestFitting(units, (u) => fits(start, u + headroomSeconds));
    if (units === 0) return 0;
    // Every later start sees the same one price over the whole call: it would grant the same.
    if (start === first && timeline.nextBoundary(first) >= last + (units + headroomSeconds) * SECOND) return units;
  }
  return units;
}

/** The most a call of `seconds` on `rate` may cost, whenever in `window` it is answered (a hold sized for it). */
export function dearestFeeWhileRinging(rate: RateSnapshot, window: AnswerWindow, seconds: number): bigint {
  if (!isTimed(rate)) return feeAt(rate, window.from, seconds);
  const { first, last, timeline } = startsOf(rate, window, seconds);
  let dearest = 0n;
  for (let start = first; start <= last; start += SECOND) {
    const fee = segmentedFee(start, seconds, timeline).fee;
    if (fee > dearest) dearest = fee;
    if (start === first && timeline.nextBoundary(first) >= last + seconds * SECOND) break;
  }
  return dearest;
}
