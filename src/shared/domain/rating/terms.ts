import type { RateSnapshot, RateTerms, RateTiming, RateVersion } from '../types';
import { copyTiming } from './timing';

/**
 * The owner of rate terms: every place that copies, compares, normalizes or snapshots a rate's terms
 * does it here, so a new term (a timing, a currency) is added once. A rate version is the four terms
 * (connect_fee, rate, rate_increment, interval_start), its description and its validity window.
 */

/** The four terms that decide a fee (docs/INTERFACE.md, the fee formula). */
export const TERM_FIELDS = ['connect_fee', 'rate', 'rate_increment', 'interval_start'] as const satisfies ReadonlyArray<keyof RateTerms>;

/** Rate terms as exact integers, with the defaults applied (docs/DESIGN.md section 3). */
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

/** A copy of the four terms of anything that carries them. */
export function termsOf(from: RateTerms): RateTerms {
  return { connect_fee: from.connect_fee, rate: from.rate, rate_increment: from.rate_increment, interval_start: from.interval_start };
}

/**
 * A copy of a rate version (terms, description, window, timing; absent bounds and description as null, an
 * absent timing left out, so a rate without one is stored as before timings): later changes to `from` never leak.
 */
export function versionOf(
  from: RateTerms & { datetime_start?: Date | null; datetime_end?: Date | null; description?: string | null; timing?: RateTiming | null },
): RateVersion {
  return {
    datetime_start: from.datetime_start ? new Date(from.datetime_start.getTime()) : null,
    datetime_end: from.datetime_end ? new Date(from.datetime_end.getTime()) : null,
    ...termsOf(from),
    description: from.description ?? null,
    ...(from.timing ? { timing: copyTiming(from.timing) } : {}),
  };
}

/** Same rating terms and description (the window is not compared). */
export function sameTerms(a: RateTerms & { description?: string | null }, b: RateTerms & { description?: string | null }): boolean {
  return TERM_FIELDS.every((k) => a[k] === b[k]) && (a.description ?? null) === (b.description ?? null);
}

/** The copy of a rate kept on a running entry and a record: the call keeps the price it was rated at. */
export function snapshotOf(rate: RateSnapshot): RateSnapshot {
  return {
    pricelist_tag: rate.pricelist_tag,
    carrier_tag: rate.carrier_tag,
    prefix: rate.prefix,
    description: rate.description ?? null,
    ...termsOf(rate),
    ...(rate.timed ? { timed: structuredClone(rate.timed) } : {}),
  };
}
