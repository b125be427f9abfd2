/**
 * Rate decks: a carrier's price list (CSV: prefix, rate and optional connect_fee, rate_increment,
 * interval_start, description, and a timing: days, start_time, end_time, holidays) loaded into one
 * (pricelist, carrier) with an effective time T (docs/RATE-DECKS.md). Used by `rating rates import`
 * (src/cli/rates.ts) and `POST /v1/rate-decks` (src/api/rest/rate-decks.ts).
 *
 * Storage: one document per (pricelist_tag, carrier_tag, prefix, timing_key) (the unique index of
 * src/shared/domain/store.ts; an untimed rate has no timing_key, so it stays one per prefix); its fields
 * are the current version and `previous_versions` the versions a deck replaced, closed windows in time
 * order. Rating reads every version as a candidate valid in its own window, so a call that started
 * before T is rated and routed with the terms of its time.
 *
 * A deck line names one rate: its prefix and timing key (plan.ts rateName). The guarantees below hold
 * per rate so named; a deck without timing columns names each prefix's untimed rate, as before timings.
 *
 * Guarantees:
 * - Per rate: added (no document: valid from T on), unchanged (the version valid at T has the
 *   deck's terms and no end: nothing written), changed (every version stops at T, the deck's terms
 *   are current from T on). See ./plan.ts, pure and property-tested.
 * - Removed means: a rate of that pricelist and carrier that the deck does not name and whose current
 *   version is still valid at or after T stops being valid at T. Its earlier history stays; a version
 *   starting at or after T is dropped (the previous one is current again), and a document with no
 *   version left before T is deleted. A rate on a rejected line is named by the deck: never removed; a
 *   rejected line whose timing cannot be read names every rate of its prefix.
 * - Idempotent: the same deck with the same T a second time finds every prefix unchanged and nothing
 *   to remove, and writes nothing. A run that failed half-way is finished by running it again.
 * - Compare-and-swap: every write is conditional on the document still holding exactly what was read
 *   (id, key, current version and the number of earlier versions), so a concurrent API edit is never
 *   silently overwritten: a missed write is read again, planned again from what is stored and retried.
 *   There are no multi-document transactions: readers may see a deck half-applied while it runs.
 * - Nothing is written for a rejected line, for an unknown pricelist or carrier or a bad header
 *   (refused before any write), or in a dry run (which plans and counts the same way).
 * - After writing, the rating data version is bumped once (as the rates API does), also when the
 *   run fails after some writes.
 * - Bounded memory: the deck is streamed in chunks (one read and one bulkWrite per chunk); what is held
 *   for the whole run is the deck's prefixes (duplicates, removals) and the ids of the pair's existing
 *   documents by prefix (read once at the start: chunk reads go by `_id`, which every MongoDB-wire
 *   server answers by index).
 */
export { applyDeck, applyDeckRecords, casFilter, type ApplyDeckOptions } from './apply';
export {
  DeckError,
  deckLine,
  deckPrefix,
  deckTiming,
  headerProblems,
  parseEffective,
  readDeck,
  timingText,
  type DeckLine,
  type DeckRecord,
} from './parse';
export {
  cutAt,
  deckRateName,
  docName,
  rateName,
  planLine,
  planRemoval,
  sameState,
  versionAt,
  versionsOf,
  type DeckRate,
  type LinePlan,
  type LineVerdict,
  type RemovalPlan,
} from './plan';
export { emptyReport, summaryLine, type DeckProgress, type DeckReport, type RejectedLine } from './report';
