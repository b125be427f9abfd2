import type { PricelistRateDoc, RateVersion } from '../types';
import { sameTerms, versionOf } from '../rating/terms';

/**
 * The pure part of a rate deck (see ./index.ts for the guarantees): what one deck line, or one prefix
 * missing from the deck, does to one rate document at the effective time T. No I/O, no clock.
 */

/** One accepted deck line: a prefix (digits) and its terms, defaults applied. */
export interface DeckRate {
  prefix: string;
  connect_fee: number;
  rate: number;
  rate_increment: number;
  interval_start: number;
  description: string | null;
}

export type LineVerdict = 'added' | 'changed' | 'unchanged';

/** What a deck line does: the document to write (null: no write) and how it is counted. */
export interface LinePlan {
  verdict: LineVerdict;
  /** The whole new document (inserted when `verdict` is 'added', else replacing the one read); null when unchanged. */
  doc: PricelistRateDoc | null;
}

/** What a prefix missing from the deck does: nothing, a replacement, or deleting the document. */
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
  doc: Pick<PricelistRateDoc, '_id' | 'pricelist_tag' | 'carrier_tag' | 'prefix'>,
  versions: readonly RateVersion[],
): PricelistRateDoc {
  const current = versions[versions.length - 1];
  return {
    _id: doc._id,
    pricelist_tag: doc.pricelist_tag,
    carrier_tag: doc.carrier_tag,
    prefix: doc.prefix,
    ...versionOf(current),
    previous_versions: versions.slice(0, -1).map(versionOf),
  };
}

/** The deck line's terms as a version valid from `at` on. */
function newVersion(line: DeckRate, at: Date): RateVersion {
  return versionOf({ ...line, datetime_start: at, datetime_end: null });
}

/**
 * One deck line against the document of its (pricelist, carrier, prefix), if any:
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
    return {
      verdict: 'added',
      doc: withVersions(
        { _id: target.newId(), pricelist_tag: target.pricelist_tag, carrier_tag: target.carrier_tag, prefix: line.prefix },
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
 * A prefix missing from the deck: when its current version is valid at or after T, every version stops
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
  const va = versionsOf(a);
  const vb = versionsOf(b);
  return va.length === vb.length && va.every((v, i) => sameVersion(v, vb[i]));
}
