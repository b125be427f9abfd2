import type { AccountType, RateTerms } from '../domain/types';
import { feeForSeconds, normalizeTerms } from './fee';

/** 4 hours: the longest call authorization ever grants (DESIGN 3). */
export const MAX_UNITS_CAP = 14400;

/**
 * Largest duration in seconds (0..cap) whose fee fits `available`.
 * POSTPAID accounts get the cap. `terms` null means no rate applies, so nothing is charged
 * (an inbound call without a rate): the cap, unless the available balance is already negative.
 * A negative available balance gives 0.
 */
export function maxAvailableUnits(
  terms: RateTerms | null,
  available: bigint,
  accountType: AccountType,
  cap: number = MAX_UNITS_CAP,
): number {
  if (!Number.isSafeInteger(cap) || cap < 0) {
    throw new RangeError(`cap must be a non-negative integer, got ${String(cap)}`);
  }
  if (accountType === 'POSTPAID') return cap;
  if (available < 0n) return 0;
  if (terms === null) return cap;
  const t = normalizeTerms(terms);
  const fee = (s: number): bigint => feeForSeconds(t, BigInt(s));
  // Covers free rates (rate 0 and an affordable connect fee) without searching.
  if (fee(cap) <= available) return cap;
  // fee is non-decreasing in the duration (fee(0) = 0 <= connect_fee <= fee(1) <= ...), so binary
  // search keeps fee(lo) <= available < fee(hi).
  let lo = 0;
  let hi = cap;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (fee(mid) <= available) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether a prepaid call may start: the available balance pays the connect fee plus one
 * increment at the rate (DESIGN 4). `terms` null (nothing charged) only needs a non-negative
 * available balance.
 */
export function canAffordStart(terms: RateTerms | null, available: bigint): boolean {
  if (terms === null) return available >= 0n;
  const t = normalizeTerms(terms);
  // The first increment past interval_start is the first one charged at the rate.
  return available >= feeForSeconds(t, t.intervalStart + t.increment);
}
