import {
  MongoBulkWriteError,
  type Collection,
  type Db,
  type Document,
  type Filter,
  type OptionalUnlessRequiredId,
  type UpdateFilter,
} from 'mongodb';
import { bulkRefusals, isDuplicateKeyError } from './mongo-errors';

/**
 * Group commit for the call path (issue 12): concurrent, independent single-document commands on one
 * collection travel as one command (inserts, updates whose result is not needed, reads by a unique
 * key). Each MongoDB command costs a round trip, a socket write on both sides and the server's
 * per-command work, which is most of a worker's CPU per call (docs/BENCHMARKS.md); a worker running
 * 16 jobs at once sends many inserts and updates of the same kind at the same moment.
 *
 * What stays exactly as with one command each:
 * - every write is still atomic on its own document, and independent of the others (unordered bulk:
 *   one write's failure neither stops nor undoes another);
 * - every caller learns its own write's outcome (inserted, duplicate key, or its error), and only once
 *   the command carrying it was acknowledged with the client's write concern;
 * - nothing waits for a timer unless asked: the first write of an idle batcher leaves at the next turn
 *   of the event loop; writes that arrive while a command is in flight leave together as soon as it
 *   returns. Handles made by `withGroupWindow` (the processing lane, PROCESSING_WINDOW_MS) instead
 *   hold the first write of an idle batcher for their window, so that calls arriving one at a time
 *   (an open loop) share commands too; only the bookkeeping of work nobody waits on takes that lane.
 * A command that fails as a whole (connection lost) fails every write it carried, each of which may or
 * may not have been applied: exactly what a single command's failure means, so callers keep their
 * idempotent retries.
 *
 * Batchers are per collection object (a WeakMap, so they live and die with the client's handles).
 */

type Outcome<R> = R | Error;

/** Batchers holding writes that wait for company (a timer armed): flushWaitingWrites sends them. */
const waiting = new Set<{ flush(): Promise<void> }>();

/**
 * Sends now every grouped write that is waiting for company, and resolves once they are acknowledged
 * (or failed: each caller hears its own outcome). For a process closing its MongoDB client: nothing
 * left waiting is lost with it.
 */
export async function flushWaitingWrites(): Promise<void> {
  await Promise.all([...waiting].map((batcher) => batcher.flush()));
}

class Batcher<T, R> {
  private queue: Array<{ item: T; resolve: (result: R) => void; reject: (err: unknown) => void }> = [];
  private draining = false;
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (performance.now()). */
  private due = 0;
  /** Resolves when the current drain has sent everything queued. */
  private drained: Promise<void> = Promise.resolve();

  constructor(
    private readonly send: (items: T[]) => Promise<Array<Outcome<R>>>,
    private readonly maxBatch: number,
    private readonly windowMs: number,
  ) {}

  /**
   * `waitMs`: how long the item may wait for company when the batcher is idle (the handle's window by
   * default). The batcher leaves at the earliest deadline among the items it holds: an item that may
   * wait leaves with the next one that may wait less (a charged mark's fifth of a second never holds a
   * windowed write longer than its window).
   */
  submit(item: T, waitMs = this.windowMs): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.draining) return;
      if (waitMs > 0) {
        const due = performance.now() + waitMs;
        if (!this.timer || due < this.due) {
          clearTimeout(this.timer);
          this.due = due;
          this.timer = setTimeout(() => this.start(), waitMs);
        }
        waiting.add(this);
      } else this.start();
    });
  }

  /** Sends what waits now; resolves once it is sent. */
  flush(): Promise<void> {
    if (this.timer) this.start();
    return this.drained;
  }

  private start(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    waiting.delete(this);
    if (this.draining) return;
    this.draining = true;
    this.drained = new Promise((resolve) => setImmediate(() => void this.drain().then(resolve)));
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const outcomes = await this.send(batch.map((b) => b.item));
        batch.forEach((b, i) => {
          const outcome = outcomes[i];
          if (outcome instanceof Error) b.reject(outcome);
          else b.resolve(outcome);
        });
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.draining = false;
  }
}

/** Most writes one command carries (well under the server's 100,000 and 48 MB per batch). */
const MAX_BATCH = 500;

/** A write refused on its own document inside an unordered bulk, as the error a single command would have thrown. */
class ItemWriteError extends Error {
  constructor(
    readonly code: number | undefined,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Sends items as one unordered bulk (`run`) and gives each item its outcome: `ok`, or the error the
 * server refused it with. A failure of the whole command, or a write concern error, leaves every item's
 * fate unknown: thrown, so every caller gets it.
 */
function unorderedBulk<T, R>(ok: R, run: (items: T[]) => Promise<unknown>): (items: T[]) => Promise<Array<Outcome<R>>> {
  return async (items) => {
    try {
      await run(items);
      return items.map(() => ok);
    } catch (err) {
      const refusals = bulkRefusals(err);
      if (err instanceof MongoBulkWriteError && err.result?.getWriteConcernError()) throw err;
      const outcomes: Array<Outcome<R>> = items.map(() => ok);
      for (const refusal of refusals)
        outcomes[refusal.index] = new ItemWriteError(refusal.code, refusal.errmsg ?? `write ${refusal.index} refused`);
      return outcomes;
    }
  };
}

/** The value `map` holds for `key`, made by `make` the first time. */
function held<K, V>(map: { get(key: K): V | undefined; set(key: K, value: V): unknown }, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

const windows = new WeakMap<Collection<never>, number>();

/** The window of a collection handle's batchers: 0 unless made by withGroupWindow. */
function windowOf(collection: Collection<never>): number {
  return windows.get(collection) ?? 0;
}

/**
 * New handles on the same collections (same client, same database) whose grouped commands wait up to
 * `windowMs` for company: their batchers are their own, so the call path's batchers never wait.
 * Commands that are not grouped behave exactly as on the originals.
 */
export function withGroupWindow<C extends object>(db: Db, collections: C, windowMs: number): C {
  if (windowMs <= 0) return collections;
  const windowed: Record<string, Collection<never>> = {};
  for (const [key, collection] of Object.entries(collections as Record<string, Collection<never>>)) {
    const handle = db.collection<never>(collection.collectionName);
    windows.set(handle, windowMs);
    windowed[key] = handle;
  }
  return windowed as C;
}

const inserters = new WeakMap<Collection<never>, Batcher<unknown, 'inserted'>>();
/** An update statement of a grouped `update` command, and what became of it. */
type UpdateItem = { filter: unknown; update: unknown; upsert?: boolean };
type UpdateOutcome = 'sent' | 'upserted';
const updaters = new WeakMap<Collection<never>, Batcher<UpdateItem, UpdateOutcome>>();

/**
 * Inserts one document, grouped with concurrent inserts into the same collection. 'duplicate' when a
 * unique index already holds its key (what insertOne reports as error 11000); other errors throw.
 */
export async function groupInsert<T extends Document>(
  collection: Collection<T>,
  doc: OptionalUnlessRequiredId<T>,
): Promise<'inserted' | 'duplicate'> {
  const key = collection as unknown as Collection<never>;
  const batcher = held(
    inserters,
    key,
    () =>
      new Batcher(
        unorderedBulk('inserted' as const, (docs: unknown[]) =>
          collection.insertMany(docs as Array<OptionalUnlessRequiredId<T>>, { ordered: false }),
        ),
        MAX_BATCH,
        windowOf(key),
      ),
  );
  try {
    return await batcher.submit(doc);
  } catch (err) {
    if (isDuplicateKeyError(err)) return 'duplicate';
    throw err;
  }
}

/** The batcher of a collection's grouped update statements (one `update` command per batch). */
function updaterOf<T extends Document>(collection: Collection<T>): Batcher<UpdateItem, UpdateOutcome> {
  const key = collection as unknown as Collection<never>;
  return held(
    updaters,
    key,
    () =>
      new Batcher<UpdateItem, UpdateOutcome>(
        async (ops) => {
          // Which statements inserted (by index), also when others were refused.
          let upserted: Record<number, unknown> = {};
          const outcomes = await unorderedBulk('sent' as UpdateOutcome, async (items: UpdateItem[]) => {
            try {
              const result = await collection.bulkWrite(
                items.map((op) => ({
                  updateOne: { filter: op.filter as Filter<T>, update: op.update as UpdateFilter<T>, upsert: op.upsert === true },
                })),
                { ordered: false },
              );
              upserted = result.upsertedIds;
            } catch (err) {
              if (err instanceof MongoBulkWriteError) upserted = err.result?.upsertedIds ?? {};
              throw err;
            }
          })(ops);
          return outcomes.map((outcome, i) => (outcome === 'sent' && upserted[i] !== undefined ? 'upserted' : outcome));
        },
        MAX_BATCH,
        windowOf(key),
      ),
  );
}

/**
 * Applies one update whose result nobody needs (it is idempotent and guarded by its filter: marking a
 * record charged, removing a settled marker), grouped with concurrent ones on the same collection.
 * Resolves once acknowledged; a refusal of this update throws. `waitMs`: an update nobody waits on may
 * wait that long for the collection's next grouped update, to travel in its command (a record's charged
 * mark, end-charge.ts); it is sent alone when none comes.
 */
export async function groupUpdate<T extends Document>(
  collection: Collection<T>,
  filter: Filter<T>,
  update: UpdateFilter<T>,
  waitMs?: number,
): Promise<void> {
  await updaterOf(collection).submit({ filter, update }, waitMs);
}

/**
 * Inserts a document unless one with its `_id` exists (an upsert whose filter is `_id` and the shard
 * key, with the rest set on insert only), grouped with the collection's concurrent update statements
 * into one `update` command: 'inserted', 'exists' (that `_id` is there: nothing changed), or
 * 'duplicate' (another document holds one of its unique keys).
 */
export async function groupInsertUnlessExists<T extends Document>(
  collection: Collection<T>,
  doc: T & { _id: unknown },
  keyFields: ReadonlyArray<keyof T & string>,
): Promise<'inserted' | 'exists' | 'duplicate'> {
  const filter: Record<string, unknown> = { _id: doc._id };
  for (const field of keyFields) filter[field] = doc[field];
  const rest = Object.fromEntries(Object.entries(doc).filter(([field]) => !(field in filter)));
  try {
    const outcome = await updaterOf(collection).submit({ filter, update: { $setOnInsert: rest }, upsert: true });
    return outcome === 'upserted' ? 'inserted' : 'exists';
  } catch (err) {
    if (isDuplicateKeyError(err)) return 'duplicate';
    throw err;
  }
}

const finders = new WeakMap<Collection<never>, Map<string, Batcher<string, Document | null>>>();

/**
 * Reads one whole document by a field that a unique index covers (`account_tag`), grouped with
 * concurrent reads of the same collection by the same field into one `$in` query: a unique-key look-up
 * as before, for several keys at once. A grouped read sees the document as it is at some moment after
 * it was asked for, as a single read does; callers that write back still guard their writes.
 */
export async function groupFindOne<T extends Document>(collection: Collection<T>, field: string, value: string): Promise<T | null> {
  const key = collection as unknown as Collection<never>;
  const byField = held(finders, key, () => new Map<string, Batcher<string, Document | null>>());
  const batcher = held(
    byField,
    field,
    () =>
      new Batcher<string, Document | null>(
        async (values) => {
          const docs = await collection.find({ [field]: { $in: [...new Set(values)] } } as Filter<T>).toArray();
          const found = new Map<unknown, Document>(docs.map((doc) => [(doc as Document)[field], doc as Document]));
          // Each caller gets its own copy: they may change what they read.
          const handedOut = new Set<unknown>();
          return values.map((v) => {
            const doc = found.get(v) ?? null;
            if (!doc || !handedOut.has(v)) {
              handedOut.add(v);
              return doc;
            }
            return structuredClone(doc);
          });
        },
        MAX_BATCH,
        windowOf(key),
      ),
  );
  return (await batcher.submit(value)) as T | null;
}

const elementFinders = new WeakMap<Collection<never>, Map<string, Batcher<{ key: string; id: string }, ElementRead>>>();

/** A document's key field and one element of its array, or null when no document has that key. */
type ElementRead = { doc: Document; element: Document | undefined } | null;

/**
 * Reads one element of a document's array (`array`, its elements named by `idField`), the document
 * found by a field a unique index covers (`field`): grouped with concurrent reads of the same
 * collection into one `$in` query, projected to the key and the wanted element (`$elemMatch`). A busy
 * account holds hundreds of running calls: returning all of them to read one costs both sides far
 * more than the look-up (docs/BENCHMARKS.md). A projection returns one element per document, so
 * several elements wanted of one document in the same group take a round each.
 */
export async function groupFindElement<T extends Document, E>(
  collection: Collection<T>,
  field: string,
  key: string,
  array: string,
  idField: string,
  id: string,
): Promise<{ doc: T; element: E | undefined } | null> {
  const handle = collection as unknown as Collection<never>;
  const byShape = held(elementFinders, handle, () => new Map<string, Batcher<{ key: string; id: string }, ElementRead>>());
  const batcher = held(
    byShape,
    `${field}\u0000${array}\u0000${idField}`,
    () =>
      new Batcher<{ key: string; id: string }, ElementRead>(
        async (items) => {
          const projection = (ids: string[]) => ({
            [field]: 1,
            [array]: { $elemMatch: { [idField]: ids.length === 1 ? ids[0] : { $in: ids } } },
          });
          // Each caller gets its own copy, as from groupFindOne: they may change what they read. The first
          // caller a document answers takes it as read; only a caller of the same element after it needs a clone.
          const handedOut = new Set<Document>();
          const answer = (doc: Document | undefined | null, wanted: string): ElementRead | 'other' => {
            if (!doc) return null;
            const element = (doc[array] as Document[] | undefined)?.[0];
            if (element && element[idField] !== wanted) return 'other';
            if (!handedOut.has(doc)) {
              handedOut.add(doc);
              return { doc, element };
            }
            const copy = structuredClone(doc);
            return { doc: copy, element: (copy[array] as Document[] | undefined)?.[0] };
          };
          const results: ElementRead[] = items.map(() => null);
          let pending = items.map((_, i) => i);
          // Every round answers, of each document, the wanted element it returned; it stops when one answers nothing.
          while (pending.length > 0) {
            const docs = await collection
              .find({ [field]: { $in: [...new Set(pending.map((i) => items[i].key))] } } as Filter<T>, {
                projection: projection([...new Set(pending.map((i) => items[i].id))]),
              })
              .toArray();
            const found = new Map<unknown, Document>(docs.map((doc) => [(doc as Document)[field], doc as Document]));
            const next: number[] = [];
            for (const i of pending) {
              const read = answer(found.get(items[i].key), items[i].id);
              if (read === 'other') next.push(i);
              else results[i] = read;
            }
            if (next.length === pending.length) break;
            pending = next;
          }
          // Left over only if an element's id were wanted of two documents: one exact read each.
          for (const i of pending) {
            const read = answer(
              await collection.findOne({ [field]: items[i].key } as Filter<T>, { projection: projection([items[i].id]) }),
              items[i].id,
            );
            results[i] = read === 'other' ? null : read;
          }
          return results;
        },
        MAX_BATCH,
        windowOf(handle),
      ),
  );
  return (await batcher.submit({ key, id })) as { doc: T; element: E | undefined } | null;
}
