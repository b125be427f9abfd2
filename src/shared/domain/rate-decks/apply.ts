import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { AnyBulkWriteOperation, Collection, Filter } from 'mongodb';
import { MongoBulkWriteError } from 'mongodb';
import type { PricelistRateDoc } from '../types';
import type { Collections } from '../store';
import { DeckError, deckLine, deckPrefix, readDeck, timingText, type DeckLine, type DeckRecord } from './parse';
import { docName, planLine, planRemoval, rateName, sameState, type DeckRate, type LineVerdict } from './plan';
import { emptyReport, type DeckProgress, type DeckReport, type RejectedLine } from './report';
import { DeckLease } from './lease';
import { versionOf } from '../rating/terms';
import { normalizeTiming, timingKey } from '../rating/timing';

/** The I/O of a rate deck over the service's collections; ./index.ts states its guarantees. */

export interface ApplyDeckOptions {
  pricelist_tag: string;
  carrier_tag: string;
  /** T: replaced versions end here, new ones start here. */
  effective: Date;
  /** Plan and count, write nothing. */
  dryRun?: boolean;
  /** Deck lines read and written together (one read, one bulkWrite); default 1000. */
  chunkSize?: number;
  /**
   * Bumps the rating data version (as the rates API does after its writes): called once at the end when
   * anything was written, even when the run then fails, and every `announceEveryChunks` chunks that wrote.
   */
  announce: () => Promise<void>;
  /** 0 (default): announce only at the end. */
  announceEveryChunks?: number;
  /** Called after every chunk and at the end. */
  onProgress?: (progress: DeckProgress) => void;
  /** Called for every rejected line, as it is found (the report keeps only the first `keepRejected`). */
  onRejected?: (rejected: RejectedLine) => void;
  /** Rejected lines kept in the report; default 1000. */
  keepRejected?: number;
  /** Id of a new rate document; default uuid4. */
  newId?: () => string;
}

type DeckCollections = Pick<Collections, 'rates' | 'pricelists' | 'carriers' | 'deckLeases'>;

/** A deck line accepted for planning, with the name (prefix and timing key) of the rate it writes. */
interface ChunkLine {
  line: number;
  rate: DeckRate;
  timing_key: string | null;
  name: string;
}

/** One planned write: the document read (null: none) and the one to leave (null: delete). */
interface Planned {
  prefix: string;
  /** With the prefix, what the rate is looked up by again (the unique key); null: untimed. */
  timing_key: string | null;
  before: PricelistRateDoc | null;
  after: PricelistRateDoc | null;
  /** For a deck line: its line and terms (re-planned on a compare-and-swap miss); absent for a removal. */
  deck?: { line: number; rate: DeckRate };
  verdict: LineVerdict | 'removed';
}

const MAX_ATTEMPTS = 5;

/**
 * Ids per `_id: {$in}` read; a chunk's reads run side by side. Smaller lists cost the local test server
 * (which matches each found document against the whole list) half the time of one list of 1,000.
 */
const READ_BATCH = 250;

/** The documents with these ids, read in batches of READ_BATCH side by side. */
async function findByIds(rates: Collection<PricelistRateDoc>, ids: readonly string[]): Promise<PricelistRateDoc[]> {
  const reads: Array<Promise<PricelistRateDoc[]>> = [];
  for (let i = 0; i < ids.length; i += READ_BATCH) reads.push(rates.find({ _id: { $in: ids.slice(i, i + READ_BATCH) } }).toArray());
  return (await Promise.all(reads)).flat();
}

/** Matches the document only while it still holds what was read: the compare of the compare-and-swap. */
export function casFilter(doc: PricelistRateDoc): Filter<PricelistRateDoc> {
  const n = doc.previous_versions?.length ?? 0;
  return {
    _id: doc._id,
    pricelist_tag: doc.pricelist_tag,
    carrier_tag: doc.carrier_tag,
    prefix: doc.prefix,
    // The key too: an edit giving an untimed rate a timing (or another one) meanwhile is a miss.
    timing_key: doc.timing_key ?? null,
    ...versionOf(doc),
    // Exactly n earlier versions (absent counts as none).
    [`previous_versions.${n}`]: { $exists: false },
    ...(n > 0 ? { [`previous_versions.${n - 1}`]: { $exists: true } } : {}),
  } as Filter<PricelistRateDoc>;
}

function writeOf(p: Planned): AnyBulkWriteOperation<PricelistRateDoc> {
  if (p.before === null) return { insertOne: { document: p.after! } };
  if (p.after === null) return { deleteOne: { filter: casFilter(p.before) } };
  const replacement: Partial<PricelistRateDoc> = { ...p.after };
  delete replacement._id;
  return { replaceOne: { filter: casFilter(p.before), replacement: replacement as PricelistRateDoc } };
}

/**
 * Applies a deck read from `input` (CSV text) to the rates of one (pricelist, carrier). Throws DeckError,
 * before writing anything, for an unknown pricelist or carrier or a bad header.
 */
export async function applyDeck(collections: DeckCollections, input: Readable, options: ApplyDeckOptions): Promise<DeckReport> {
  return applyDeckRecords(collections, readDeck(input), options);
}

/** applyDeck over records already split (readDeck, or a test's own). */
export async function applyDeckRecords(
  collections: DeckCollections,
  records: AsyncIterable<DeckRecord>,
  options: ApplyDeckOptions,
): Promise<DeckReport> {
  const run = new DeckRun(collections, options);
  return run.run(records);
}

class DeckRun {
  private readonly rates: Collection<PricelistRateDoc>;
  private readonly report: DeckReport;
  private readonly at: Date;
  private readonly chunkSize: number;
  private readonly keepRejected: number;
  private readonly newId: () => string;
  /**
   * Every rate the deck names (accepted or not) by its name (plan.ts rateName: prefix and timing key),
   * with its first line: duplicates, and what is not removed.
   */
  private readonly inDeck = new Map<string, number>();
  /** Prefixes named on rejected lines whose timing could not be read: none of their rates is removed. */
  private readonly wholePrefixes = new Set<string>();
  /** The first record that may have swallowed the lines after it (a quote left open: parse.ts, `swallowed`). */
  private unreadableLine: number | null = null;
  /** Ids of the (pricelist, carrier)'s documents by name, read once; the deck's are taken out as they come. */
  private existing = new Map<string, string>();
  private chunksSinceAnnounce = 0;
  private unannounced = false;
  private lease: DeckLease | null = null;

  constructor(
    private readonly collections: DeckCollections,
    private readonly options: ApplyDeckOptions,
  ) {
    this.rates = collections.rates;
    this.at = new Date(options.effective.getTime());
    if (!Number.isFinite(this.at.getTime())) throw new DeckError('effective: must be a valid datetime', 'BAD_USER_INPUT', 'effective');
    this.chunkSize = Math.max(1, options.chunkSize ?? 1000);
    this.keepRejected = options.keepRejected ?? 1000;
    this.newId = options.newId ?? randomUUID;
    this.report = emptyReport(this.at, options.dryRun === true);
  }

  async run(records: AsyncIterable<DeckRecord>): Promise<DeckReport> {
    const { pricelist_tag, carrier_tag } = this.options;
    const [pricelist, carrier] = await Promise.all([
      this.collections.pricelists.findOne({ pricelist_tag }, { projection: { _id: 1 } }),
      this.collections.carriers.findOne({ carrier_tag }, { projection: { _id: 1 } }),
    ]);
    if (!pricelist)
      throw new DeckError(`pricelist_tag: no pricelist ${JSON.stringify(pricelist_tag)}`, 'INVALID_REFERENCE', 'pricelist_tag');
    if (!carrier) throw new DeckError(`carrier_tag: no carrier ${JSON.stringify(carrier_tag)}`, 'INVALID_REFERENCE', 'carrier_tag');
    // Taken before the pair's rates are read: another deck's writes must not interleave with this one's (lease.ts).
    this.lease = this.options.dryRun ? null : await DeckLease.take(this.collections.deckLeases, pricelist_tag, carrier_tag, randomUUID());
    try {
      await this.readExistingKeys();
      let chunk: ChunkLine[] = [];
      for await (const record of records) {
        this.report.lines += 1;
        const accepted = this.accept(record);
        if (accepted) chunk.push(accepted);
        if (chunk.length >= this.chunkSize) {
          await this.deckChunk(chunk);
          chunk = [];
        }
      }
      if (chunk.length > 0) await this.deckChunk(chunk);
      // Which prefixes such a deck names is unknown: removing every rate it seems not to name could end
      // thousands at T. None is removed; the lines it read are applied.
      if (this.unreadableLine === null) await this.removals();
      else
        this.report.removals_skipped =
          `a quote left open at or before line ${this.unreadableLine} may hide the lines after it: ` +
          'no rate was removed; fix the file and run it again to apply removals';
      this.progress('done');
      return this.report;
    } finally {
      try {
        if (this.unannounced) await this.options.announce();
      } finally {
        // A release that fails (the store lost) leaves the lease to expire; it must not hide the run's outcome.
        await this.lease?.release().catch(() => undefined);
      }
    }
  }

  /** The (pricelist, carrier)'s rate names and ids: one index-ordered scan of three small fields. */
  private async readExistingKeys(): Promise<void> {
    const cursor = this.rates.find(
      { pricelist_tag: this.options.pricelist_tag, carrier_tag: this.options.carrier_tag },
      { projection: { _id: 1, prefix: 1, timing_key: 1 } },
    );
    for await (const doc of cursor) this.existing.set(docName(doc), doc._id);
  }

  /** The unique key of one rate of the (pricelist, carrier): null matches the untimed rate (no timing_key). */
  private keyFilter(prefix: string, timing_key: string | null): Filter<PricelistRateDoc> {
    // null, not {$exists: false}: it also matches an explicit null, which the unique index holds as the same key.
    return {
      pricelist_tag: this.options.pricelist_tag,
      carrier_tag: this.options.carrier_tag,
      prefix,
      timing_key,
    } as Filter<PricelistRateDoc>;
  }

  private reject(line: number, reason: string): void {
    this.report.rejected_count += 1;
    const rejected = { line, reason };
    if (this.report.rejected.length < this.keepRejected) this.report.rejected.push(rejected);
    this.options.onRejected?.(rejected);
  }

  /** A record's deck line when accepted; rejected ones are reported here. */
  private accept(record: DeckRecord): ChunkLine | null {
    if (record.swallowed) this.unreadableLine ??= record.line;
    let parsed: DeckLine;
    if (record.error !== undefined || !record.row) {
      const named = record.prefixCell === undefined ? null : deckPrefix(record.prefixCell);
      parsed = {
        ok: false,
        reason: record.error ?? 'BAD_USER_INPUT: unreadable line',
        prefix: named && 'prefix' in named ? named.prefix : null,
        // Without timing columns every line is untimed; with them, a broken record's timing is unknown.
        ...(record.timingUnread ? {} : { timing: null }),
      };
    } else {
      parsed = deckLine(record.row);
    }
    const prefix = parsed.ok ? parsed.rate.prefix : parsed.prefix;
    // Undefined only for a rejected line whose timing cells are unreadable; an accepted line's absent timing is untimed.
    const timing = parsed.ok ? (parsed.rate.timing ?? null) : parsed.timing;
    const key = timing === undefined ? undefined : timingKey(timing);
    if (prefix !== null && key === undefined) {
      // Which of the prefix's timed rates the line meant is unknown: keep them all rather than remove one.
      this.wholePrefixes.add(prefix);
    } else if (prefix !== null && key !== undefined) {
      const name = rateName(prefix, key);
      const first = this.inDeck.get(name);
      if (first !== undefined) {
        // An untimed duplicate is worded as before timings; a timed one says which timing.
        const normalized = normalizeTiming(timing);
        const which = normalized ? ` with the timing ${timingText(normalized)}` : '';
        this.reject(record.line, `BAD_USER_INPUT: prefix: ${prefix}${which} already appears on line ${first}`);
        return null;
      }
      this.inDeck.set(name, record.line);
    }
    if (!parsed.ok) {
      this.reject(record.line, parsed.reason);
      return null;
    }
    return { line: record.line, rate: parsed.rate, timing_key: key ?? null, name: rateName(parsed.rate.prefix, key) };
  }

  /** Documents of the chunk's rates by name: by id from the key scan (one read), by key for any id that moved. */
  private async readByName(lines: readonly ChunkLine[]): Promise<Map<string, PricelistRateDoc>> {
    const { pricelist_tag, carrier_tag } = this.options;
    const ids = lines.map((l) => this.existing.get(l.name)).filter((id): id is string => id !== undefined);
    const found = new Map<string, PricelistRateDoc>();
    if (ids.length === 0) return found;
    const docs = await findByIds(this.rates, ids);
    const wanted = new Set(lines.map((l) => l.name));
    for (const d of docs) {
      const name = docName(d);
      if (d.pricelist_tag === pricelist_tag && d.carrier_tag === carrier_tag && wanted.has(name)) found.set(name, d);
    }
    // Renamed or deleted since the scan (an API edit): look the rate up by its unique key.
    for (const l of lines) {
      if (this.existing.has(l.name) && !found.has(l.name)) {
        const doc = await this.rates.findOne(this.keyFilter(l.rate.prefix, l.timing_key));
        if (doc) found.set(l.name, doc);
      }
    }
    return found;
  }

  private async deckChunk(chunk: ChunkLine[]): Promise<void> {
    // Renewed by every chunk, written or not; a run that stalled past its lease writes nothing more.
    await this.lease?.renew();
    const docs = await this.readByName(chunk);
    const planned: Planned[] = [];
    for (const { line, rate, timing_key, name } of chunk) {
      this.existing.delete(name);
      const before = docs.get(name) ?? null;
      const plan = this.planDeckLine(before, rate);
      if (plan.doc === null) this.report.unchanged += 1;
      else planned.push({ prefix: rate.prefix, timing_key, before, after: plan.doc, deck: { line, rate }, verdict: plan.verdict });
    }
    await this.write(planned);
    this.progress('deck');
  }

  private planDeckLine(before: PricelistRateDoc | null, rate: DeckRate) {
    return planLine(before, rate, this.at, {
      pricelist_tag: this.options.pricelist_tag,
      carrier_tag: this.options.carrier_tag,
      newId: this.newId,
    });
  }

  /** Rates (prefix and timing) of the (pricelist, carrier) the deck does not name: their validity ends at T. */
  private async removals(): Promise<void> {
    const ids = [...this.existing.entries()].filter(([name]) => !this.inDeck.has(name)).map(([, id]) => id);
    this.existing = new Map();
    for (let i = 0; i < ids.length; i += this.chunkSize) {
      await this.lease?.renew();
      const docs = await findByIds(this.rates, ids.slice(i, i + this.chunkSize));
      const planned: Planned[] = [];
      for (const doc of docs) {
        if (
          doc.pricelist_tag !== this.options.pricelist_tag ||
          doc.carrier_tag !== this.options.carrier_tag ||
          this.inDeck.has(docName(doc)) ||
          this.wholePrefixes.has(doc.prefix)
        )
          continue;
        const plan = planRemoval(doc, this.at);
        if (plan.kind === 'none') continue;
        planned.push({
          prefix: doc.prefix,
          timing_key: doc.timing_key ?? null,
          before: doc,
          after: plan.kind === 'delete' ? null : plan.doc,
          verdict: 'removed',
        });
      }
      await this.write(planned);
      this.progress('removals');
    }
  }

  private count(verdict: Planned['verdict']): void {
    this.report[verdict] += 1;
  }

  /**
   * One bulkWrite of compare-and-swap writes. When some did not apply (the document changed since it was
   * read, or a concurrent insert took the key), each is checked: a document already in the planned state
   * was written; any other is read again, planned again and written alone, up to MAX_ATTEMPTS times.
   */
  private async write(planned: Planned[]): Promise<void> {
    if (planned.length === 0) return;
    if (this.options.dryRun) {
      for (const p of planned) this.count(p.verdict);
      return;
    }
    let applied = 0;
    // Set first: a write that fails on the way back may still have been applied.
    this.unannounced = true;
    try {
      const result = await this.rates.bulkWrite(planned.map(writeOf), { ordered: false });
      applied = result.insertedCount + result.matchedCount + result.deletedCount;
    } catch (err) {
      if (!(err instanceof MongoBulkWriteError)) throw err;
      applied = -1;
    }
    if (applied === planned.length) {
      for (const p of planned) this.count(p.verdict);
    } else {
      for (const p of planned) await this.settle(p);
    }
    await this.afterWrite();
  }

  /** Makes sure one planned write took effect, re-planning it against fresh reads until it does. */
  private async settle(first: Planned): Promise<void> {
    let p: Planned | null = first;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const current = await this.rates.findOne(this.keyFilter(p.prefix, p.timing_key));
      if (sameState(current, p.after)) {
        this.count(p.verdict);
        return;
      }
      // Not (or no longer) what was planned: plan again from what is stored now.
      p = this.replan(p, current);
      if (p === null) return;
      try {
        const result = await this.rates.bulkWrite([writeOf(p)], { ordered: true });
        if (result.insertedCount + result.matchedCount + result.deletedCount === 1) {
          this.count(p.verdict);
          return;
        }
      } catch (err) {
        if (!(err instanceof MongoBulkWriteError)) throw err;
      }
    }
    throw new Error(
      `rate ${this.options.pricelist_tag}/${this.options.carrier_tag}/${rateName(first.prefix, first.timing_key)} kept changing while the deck was written; run the deck again`,
    );
  }

  /** A write planned again from the stored document; null when nothing is left to do (counted here). */
  private replan(p: Planned, current: PricelistRateDoc | null): Planned | null {
    if (p.deck) {
      const plan = this.planDeckLine(current, p.deck.rate);
      if (plan.doc === null) {
        this.report.unchanged += 1;
        return null;
      }
      return { ...p, before: current, after: plan.doc, verdict: plan.verdict };
    }
    if (current === null) return null;
    const plan = planRemoval(current, this.at);
    if (plan.kind === 'none') return null;
    return { ...p, before: current, after: plan.kind === 'delete' ? null : plan.doc };
  }

  private async afterWrite(): Promise<void> {
    const every = this.options.announceEveryChunks ?? 0;
    if (every <= 0) return;
    this.chunksSinceAnnounce += 1;
    if (this.chunksSinceAnnounce < every) return;
    this.chunksSinceAnnounce = 0;
    await this.options.announce();
    this.unannounced = false;
  }

  private progress(phase: DeckProgress['phase']): void {
    const r = this.report;
    this.options.onProgress?.({
      phase,
      lines: r.lines,
      added: r.added,
      changed: r.changed,
      unchanged: r.unchanged,
      removed: r.removed,
      rejected: r.rejected_count,
    });
  }
}
