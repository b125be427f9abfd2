import { MongoBulkWriteError } from 'mongodb';
import type { Collections } from '../../shared/mongo';
import { chunks } from './ids';
import type { ImportRecordDoc } from './plan';

const IN_CHUNK = 200;
const WRITE_CHUNK = 1000;

/**
 * Inserts records with one unordered insertMany. Returns the positions refused as duplicates (the
 * unique `_id` or (account_tag, transaction_tag) index): those calls are recorded already, by this
 * batch in an earlier attempt or by someone else. Any other error fails the batch (it is retried).
 */
export async function insertRecords(transactions: Collections['transactions'], docs: ImportRecordDoc[]): Promise<Set<number>> {
  const duplicates = new Set<number>();
  if (docs.length === 0) return duplicates;
  try {
    await transactions.insertMany(docs, { ordered: false });
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
    const other = errors.find((e) => e.code !== 11000);
    if (other || errors.length === 0) throw err;
    for (const e of errors) duplicates.add(e.index);
  }
  return duplicates;
}

/** State of the records with these `_id`s that exist (records of this batch written in an earlier attempt). */
export async function ownRecordStates(transactions: Collections['transactions'], ids: string[]): Promise<Map<string, string | undefined>> {
  const states = new Map<string, string | undefined>();
  const found = await Promise.all(
    chunks(ids, IN_CHUNK).map((part) => transactions.find({ _id: { $in: part } }, { projection: { _id: 1, state: 1 } }).toArray()),
  );
  for (const doc of found.flat()) states.set(doc._id, doc.state);
  return states;
}

/**
 * Marks records 'charged' after their account's debit went through. Filtered on `_id` alone: these are
 * the batch's own records, seen 'pending' just before; one update per record in a single unordered
 * bulk write keeps every lookup on the unique `_id`.
 */
export async function markCharged(transactions: Collections['transactions'], ids: string[]): Promise<void> {
  for (const part of chunks(ids, WRITE_CHUNK)) {
    await transactions.bulkWrite(
      part.map((id) => ({ updateOne: { filter: { _id: id }, update: { $set: { state: 'charged' as const } } } })),
      { ordered: false },
    );
  }
}
