import type { Collection, Document, Filter, OptionalUnlessRequiredId, WithId } from 'mongodb';
import { rethrowDuplicate } from './errors';

export type SortDirection = 1 | -1;

/** Which slice of the matching records to return, in which order. */
export interface ListWindow {
  skip: number;
  limit: number;
  /** Stored paths in priority order; `_id` always last so pages never overlap. */
  sort: Array<[string, SortDirection]>;
}

/**
 * Options of list and count queries: a filter without an index (or a huge skip) must not hold the
 * store, so the server stops such a query after MONGO_MAX_TIME_MS (the client gets INTERNAL_ERROR).
 */
export interface ReadLimits {
  maxTimeMS: number;
}

/** One page of the records matching `query`. */
export function findPage<T extends Document>(
  collection: Collection<T>,
  query: Filter<T>,
  window: ListWindow,
  limits: ReadLimits,
): Promise<Array<WithId<T>>> {
  return collection.find(query, { maxTimeMS: limits.maxTimeMS }).sort(window.sort).skip(window.skip).limit(window.limit).toArray();
}

export function countMatching<T extends Document>(collection: Collection<T>, query: Filter<T>, limits: ReadLimits): Promise<number> {
  return collection.countDocuments(query, { maxTimeMS: limits.maxTimeMS });
}

/** Inserts a new record; a clash with a unique index is DUPLICATE. */
export async function insertNew<T extends Document>(
  collection: Collection<T>,
  doc: OptionalUnlessRequiredId<T>,
  what: string,
): Promise<void> {
  try {
    await collection.insertOne(doc);
  } catch (err) {
    rethrowDuplicate(err, what);
  }
}

/** Whether some record matches (stops at the first). */
export async function exists<T extends Document>(collection: Collection<T>, query: Filter<T>): Promise<boolean> {
  return (await collection.countDocuments(query, { limit: 1 })) > 0;
}
