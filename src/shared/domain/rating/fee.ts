import type { RateTerms } from '../types';
import { normalizeTerms, type NormalizedTerms } from './terms';

export { normalizeTerms, type NormalizedTerms };

/** ceil(a / b) for a >= 0, b > 0. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/** Fee of a call of `seconds` (a non-negative bigint) under already normalized terms. */
export function feeForSeconds(t: NormalizedTerms, seconds: bigint): bigint {
  if (seconds <= 0n) return 0n;
  const billable = seconds > t.intervalStart ? seconds - t.intervalStart : 0n;
  const charged = ceilDiv(billable, t.increment) * t.increment;
  return t.connectFee + ceilDiv(t.rate * charged, 60n);
}

/**
 * Fee in minor units (docs/DESIGN.md section 3):
 * billable = max(0, duration - interval_start),
 * charged = ceil(billable / increment) * increment,
 * fee = connect_fee + ceil(rate * charged / 60); a 0-second call costs nothing.
 */
export function computeFee(terms: RateTerms, durationSeconds: number): bigint {
  if (!Number.isSafeInteger(durationSeconds) || durationSeconds < 0) {
    throw new RangeError(`duration must be a non-negative integer, got ${String(durationSeconds)}`);
  }
  return feeForSeconds(normalizeTerms(terms), BigInt(durationSeconds));
}
