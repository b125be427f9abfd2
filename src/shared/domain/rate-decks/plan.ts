import type { PricelistRateDoc, RateTiming, RateVersion } from '../types';
import { sameTerms, versionOf } from '../rating/terms';
import { normalizeTiming, timingKey } from '../rating/timing';

/**
 * The pure part of a rate deck (see ./index.ts for the guarantees): what one deck line, or one rate
 * missing from the deck, does to one rate document at the effective time T. No I/O, no clock.
 */

/** One accepted deck line: a prefix (digits), its terms, defaults applied, and its timing if it has one. */
export interface DeckRate {
  prefix: string;
  connect_fee: number;
  rate: number;
  rate_increment: number;
  interval_start: number;
  description: string | null;
  /** Absent (or null): untimed, the one rate of its prefix as before timings. */
  timing?: RateTiming | null;
}

/**
 * What names a rate within one (pricelist, carrier): its prefix and its timing key (timingKey; null or
 * absent: untimed), as the unique index does. A deck line and the document it writes share this name;
 * an untimed rate's name is its prefix alone. Prefixes hold no whitespace, so the space cannot collide.
 */
export function rateName(prefix: string, timing_key: string | null | undefined): string {
  return timing_key ? `${prefix} ${timing_key}` : prefix;
}

/** The name of the rate a deck line writes. */
export function deckRateName(line: DeckRate): string {
  return rateName(line.prefix, timingKey(line.timing));
}

/** The name of a stored rate. */
export function docName(doc: Pick<PricelistRateDoc, 'prefix' | 'timing_key'>): string {
  return rateName(doc.prefix, doc.timing_key);
}

export type LineVerdict = 'added' | 'changed' | 'unchanged';

/** What a deck line does: the document to write (null: no write) and how it is counted. */
export interface LinePlan {
  verdict: LineVerdict;
  /** The whole new document (inserted when `verdict` is 'added', else replacing the one read); null when unchanged. */
  doc: PricelistRateDoc | null;
}

/** What a rate missing from the deck does: nothing, a replacement, or deleting the document. */
export type RemovalPlan = { kind: 'none' } | { kind: 'replace'; doc: PricelistRateDoc } | { kind: 'delete' };

const ms = (d: Date | null | undefined): number | null => (d === null || d === undefined ? null : d.getTime());

/** The current version of a document (its own fields). */
export function currentVersion(doc: PricelistRateDoc): RateVersion {
  return versionOf(doc);
}

/** Earlier versions then the current one, in time order. */
export function versionsOf(doc: PricelistRateDoc): RateVersion[] {
  return [...(doc.previous_versions ?? []).map(versionOf), currentVersion(doc)];
}

export { sameTerms };

/** Start inclusive, end exclusive, null bounds open (as rating reads them). */
export function isValidAt(v: Pick<RateVersion, 'datetime_start' | 'datetime_end'>, at: Date): boolean {
  const t = at.getTime();
  const start = ms(v.datetime_start);
  const end = ms(v.datetime_end);
  return (start === null || start <= t) && (end === null || end > t);
}

/** The version of a document valid at `at`, or null. */
export function versionAt(doc: PricelistRateDoc, at: Date): RateVersion | null {
  return versionsOf(doc).find((v) => isValidAt(v, at)) ?? null;
}

/**
 * The versions as they stand once their validity stops at `at`: a version starting at or after it is
 * dropped, one running past it ends at it, earlier ones are kept as they are.
 */
export function cutAt(versions: readonly RateVersion[], at: Date): RateVersion[] {
  const t = at.getTime();
  const kept: RateVersion[] = [];
  for (const v of versions) {
    const start = ms(v.datetime_start);
    if (start !== null && start >= t) continue;
    const end = ms(v.datetime_end);
    kept.push({ ...v, datetime_end: end === null || end > t ? new Date(t) : v.datetime_end });
  }
  return kept;
}

/** A document whose current version is the last of `versions` and whose earlier ones are the rest. */
function withVersions(
  doc: Pick<PricelistRateDoc, '_id' | 'pricelist_tag' | 'carrier_tag' | 'prefix' | 'timing_key'>,
  versions: readonly RateVersion[],
): PricelistRateDoc {
  const current = versions[versions.length - 1];
  return {
    _id: doc._id,
    pricelist_tag: doc.pricelist_tag,
    carrier_tag: doc.carrier_tag,
    prefix: doc.prefix,
    // An untimed rate has no timing_key at all (the unique index reads it as null), as before timings.
    ...(doc.timing_key ? { timing_key: doc.timing_key } : {}),
    ...versionOf(current),
    previous_versions: versions.slice(0, -1).map(versionOf),
  };
}

/** The deck line's terms (and timing, normalized) as a version valid from `at` on. */
function newVersion(line: DeckRate, at: Date): RateVersion {
  return versionOf({ ...line, timing: normalizeTiming(line.timing), datetime_start: at, datetime_end: null });
}

/**
 * One deck line against the document of its (pricelist, carrier, prefix, timing key), if any (the
 * caller matches them; a new document gets the line's timing and its key, an untimed one neither):
 * - none: a new document valid from T on ('added');
 * - the version valid at T has the line's terms and no end: nothing to write ('unchanged');
 * - otherwise ('changed'): every version stops at T (cutAt) and the line's terms are current from T on.
 */
export function planLine(
  existing: PricelistRateDoc | null,
  line: DeckRate,
  at: Date,
  target: { pricelist_tag: string; carrier_tag: string; newId: () => string },
): LinePlan {
  if (!existing) {
    const key = timingKey(line.timing);
    return {
      verdict: 'added',
      doc: withVersions(
        {
          _id: target.newId(),
          pricelist_tag: target.pricelist_tag,
          carrier_tag: target.carrier_tag,
          prefix: line.prefix,
          ...(key ? { timing_key: key } : {}),
        },
        [newVersion(line, at)],
      ),
    };
  }
  const valid = versionAt(existing, at);
  if (valid && valid.datetime_end === null && sameTerms(valid, line)) return { verdict: 'unchanged', doc: null };
  return { verdict: 'changed', doc: withVersions(existing, [...cutAt(versionsOf(existing), at), newVersion(line, at)]) };
}

/** Whether a document not in the deck is still valid at or after T, i.e. is removed by the deck. */
export function validFrom(doc: PricelistRateDoc, at: Date): boolean {
  const end = ms(doc.datetime_end);
  return end === null || end > at.getTime();
}

/**
 * A rate (prefix and timing) missing from the deck: when its current version is valid at or after T, every version stops
 * at T; the latest one left becomes current, and with none left the document goes.
 */
export function planRemoval(existing: PricelistRateDoc, at: Date): RemovalPlan {
  if (!validFrom(existing, at)) return { kind: 'none' };
  const kept = cutAt(versionsOf(existing), at);
  if (kept.length === 0) return { kind: 'delete' };
  return { kind: 'replace', doc: withVersions(existing, kept) };
}

function sameVersion(a: RateVersion, b: RateVersion): boolean {
  return ms(a.datetime_start) === ms(b.datetime_start) && ms(a.datetime_end) === ms(b.datetime_end) && sameTerms(a, b);
}

/** Whether two documents hold the same key and versions (what a write of `b` would leave if `a` is read back). */
export function sameState(a: PricelistRateDoc | null, b: PricelistRateDoc | null): boolean {
  if (a === null || b === null) return a === b;
  if (a._id !== b._id || a.pricelist_tag !== b.pricelist_tag || a.carrier_tag !== b.carrier_tag || a.prefix !== b.prefix) return false;
  if ((a.timing_key ?? null) !== (b.timing_key ?? null)) return false;
  const va = versionsOf(a);
  const vb = versionsOf(b);
  return va.length === vb.length && va.every((v, i) => sameVersion(v, vb[i]));
}
