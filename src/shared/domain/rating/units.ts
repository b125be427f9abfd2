import type { AccountType, RateTerms } from '../types';
import { feeForSeconds, normalizeTerms } from './fee';

/** 4 hours: the longest call authorization ever grants (docs/DESIGN.md section 3). */
export const MAX_UNITS_CAP = 14400;

/** The headroom's default (AUTHORIZATION_HEADROOM_SECONDS) is a setting: src/shared/infra/config.ts. */
export { DEFAULT_HEADROOM_SECONDS } from '../../infra/config';

/**
 * The units authorization grants (0..cap): the largest u whose call, cut anywhere before
 * u + headroomSeconds and billed per started second, still costs at most `available`, i.e.
 * fee(u + headroom) <= available. Headroom 0 is the plain "longest duration whose fee fits".
 * 0 means no call fits: for a prepaid account that is a refusal (a proxy reads timeout 0 as none).
 * POSTPAID accounts get the cap. `terms` null means no rate applies, so nothing is charged
 * (an inbound call without a rate): the cap, unless the available balance is already negative.
 */
export function maxAvailableUnits(
  terms: RateTerms | null,
  available: bigint,
  accountType: AccountType,
  cap: number = MAX_UNITS_CAP,
  headroomSeconds = 0,
): number {
  if (!Number.isSafeInteger(cap) || cap < 0) {
    throw new RangeError(`cap must be a non-negative integer, got ${String(cap)}`);
  }
  if (!Number.isSafeInteger(headroomSeconds) || headroomSeconds < 0) {
    throw new RangeError(`headroom must be a non-negative integer, got ${String(headroomSeconds)}`);
  }
  if (accountType === 'POSTPAID') return cap;
  if (available < 0n) return 0;
  if (terms === null) return cap;
  const t = normalizeTerms(terms);
  return largestFitting(cap, (u) => feeForSeconds(t, BigInt(u + headroomSeconds)) <= available);
}

/**
 * The largest u in 0..cap with fits(u), for a `fits` that holds up to some u and fails from there on (a
 * fee that never decreases with the duration: fee(0) = 0 <= connect_fee <= fee(1) <= ...). The one search
 * of both grants, at one price (above) and across price boundaries (segments.ts).
 */
export function largestFitting(cap: number, fits: (u: number) => boolean): number {
  // Covers free rates (rate 0 and an affordable connect fee) without searching.
  if (fits(cap)) return cap;
  if (!fits(0)) return 0;
  // Binary search keeps fits(lo) && !fits(hi).
  let lo = 0;
  let hi = cap;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether a prepaid call may start: the available balance pays the connect fee plus one
 * increment at the rate (docs/DESIGN.md section 4). `terms` null (nothing charged) only needs a non-negative
 * available balance.
 */
export function canAffordStart(terms: RateTerms | null, available: bigint): boolean {
  if (terms === null) return available >= 0n;
  const t = normalizeTerms(terms);
  // The first increment past interval_start is the first one charged at the rate.
  return available >= feeForSeconds(t, t.intervalStart + t.increment);
}
