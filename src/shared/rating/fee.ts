import type { RateTerms } from '../domain/types';

/** Rate terms as exact integers, with the defaults of DESIGN 3 applied. */
export interface NormalizedTerms {
  connectFee: bigint;
  /** Per minute. */
  rate: bigint;
  /** Billing step in seconds, at least 1. */
  increment: bigint;
  intervalStart: bigint;
}

function termInt(name: string, value: unknown, fallback: number | null): bigint {
  // Stored documents may lack optional terms; the declared type cannot promise their presence.
  if ((value === undefined || value === null) && fallback !== null) return BigInt(fallback);
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    // Negative terms would break the monotonicity that max-units relies on and could credit money.
    throw new RangeError(`rate term ${name} must be a non-negative integer, got ${String(value)}`);
  }
  return BigInt(value);
}

export function normalizeTerms(terms: RateTerms): NormalizedTerms {
  const increment = termInt('rate_increment', terms.rate_increment, 0);
  return {
    connectFee: termInt('connect_fee', terms.connect_fee, 0),
    rate: termInt('rate', terms.rate, null),
    increment: increment === 0n ? 1n : increment,
    intervalStart: termInt('interval_start', terms.interval_start, 0),
  };
}

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
 * Fee in minor units (DESIGN 3):
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
