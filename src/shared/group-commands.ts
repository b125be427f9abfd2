import { MongoBulkWriteError, type Collection, type Document, type Filter, type OptionalUnlessRequiredId, type UpdateFilter } from 'mongodb';
import { isDuplicateKeyError } from './mongo';

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
 * - nothing waits for a timer: the first write of an idle batcher leaves at the next turn of the event
 *   loop; writes that arrive while a command is in flight leave together as soon as it returns.
 * A command that fails as a whole (connection lost) fails every write it carried, each of which may or
 * may not have been applied: exactly what a single command's failure means, so callers keep their
 * idempotent retries.
 *
 * Batchers are per collection object (a WeakMap, so they live and die with the client's handles).
 */

type Outcome<R> = R | Error;

class Batcher<T, R> {
  private queue: Array<{ item: T; resolve: (result: R) => void; reject: (err: unknown) => void }> = [];
  private draining = false;

  constructor(
    private readonly send: (items: T[]) => Promise<Array<Outcome<R>>>,
    private readonly maxBatch: number,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => void this.drain());
      }
    });
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
 * Per-item outcomes of an unordered bulk: the items named in writeErrors failed, the others succeeded.
 * Only when the server answered the command with per-item refusals: the driver also wraps a failure of
 * the whole command (connection lost, server unreachable) in MongoBulkWriteError, with no writeErrors,
 * and there every item's fate is unknown, as it is with a write concern error.
 */
function outcomesOf<R>(count: number, err: unknown, ok: R): Array<Outcome<R>> {
  if (!(err instanceof MongoBulkWriteError) || !Array.isArray(err.writeErrors) || err.writeErrors.length === 0) throw err;
  if (err.result?.getWriteConcernError()) throw err;
  const outcomes: Array<Outcome<R>> = Array.from({ length: count }, () => ok);
  for (const writeError of err.writeErrors) outcomes[writeError.index] = new ItemWriteError(writeError.code, writeError.errmsg ?? `write ${writeError.index} refused`);
  return outcomes;
}

const inserters = new WeakMap<Collection<never>, Batcher<unknown, 'inserted'>>();
const updaters = new WeakMap<Collection<never>, Batcher<{ filter: unknown; update: unknown }, 'sent'>>();

/**
 * Inserts one document, grouped with concurrent inserts into the same collection. 'duplicate' when a
 * unique index already holds its key (what insertOne reports as error 11000); other errors throw.
 */
export async function groupInsert<T extends Document>(collection: Collection<T>, doc: OptionalUnlessRequiredId<T>): Promise<'inserted' | 'duplicate'> {
  const key = collection as unknown as Collection<never>;
  let batcher = inserters.get(key);
  if (!batcher) {
    batcher = new Batcher<unknown, 'inserted'>(async (docs) => {
      try {
        await collection.insertMany(docs as Array<OptionalUnlessRequiredId<T>>, { ordered: false });
        return docs.map(() => 'inserted' as const);
      } catch (err) {
        return outcomesOf(docs.length, err, 'inserted' as const);
      }
    }, MAX_BATCH);
    inserters.set(key, batcher);
  }
  try {
    return await batcher.submit(doc);
  } catch (err) {
    if (isDuplicateKeyError(err)) return 'duplicate';
    throw err;
  }
}

/**
 * Applies one update whose result nobody needs (it is idempotent and guarded by its filter: marking a
 * record charged, removing a settled marker), grouped with concurrent ones on the same collection.
 * Resolves once acknowledged; a refusal of this update throws.
 */
export async function groupUpdate<T extends Document>(collection: Collection<T>, filter: Filter<T>, update: UpdateFilter<T>): Promise<void> {
  const key = collection as unknown as Collection<never>;
  let batcher = updaters.get(key);
  if (!batcher) {
    batcher = new Batcher<{ filter: unknown; update: unknown }, 'sent'>(async (ops) => {
      try {
        await collection.bulkWrite(
          ops.map((op) => ({ updateOne: { filter: op.filter as Filter<T>, update: op.update as UpdateFilter<T> } })),
          { ordered: false },
        );
        return ops.map(() => 'sent' as const);
      } catch (err) {
        return outcomesOf(ops.length, err, 'sent' as const);
      }
    }, MAX_BATCH);
    updaters.set(key, batcher);
  }
  await batcher.submit({ filter, update });
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
  let byField = finders.get(key);
  if (!byField) {
    byField = new Map();
    finders.set(key, byField);
  }
  let batcher = byField.get(field);
  if (!batcher) {
    batcher = new Batcher<string, Document | null>(async (values) => {
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
    }, MAX_BATCH);
    byField.set(field, batcher);
  }
  return (await batcher.submit(value)) as T | null;
}
