import type { Db } from 'mongodb';
import { isDuplicateKeyError } from '../../shared/mongo';
import type { ImportBatchResult } from '../../shared/queues/payloads';

/**
 * Durable facts about imports, beside the queue (Redis may lose them; MongoDB must not):
 * - `imports`: one document per file import id, fixing its batch size so a rerun cuts the same batches;
 * - `import_batches`: one document per batch (file imports and agent batches alike), claimed when an
 *   execution starts and given the batch's result once its debits are applied. The result is what
 *   makes the batch's records ('imported') charged, lets a rerun skip the batch and report it again,
 *   and tells a rollback whether there is a debit to refund.
 * Both are read and written by `_id` only.
 */
export interface ImportDoc {
  _id: string;
  batch_size: number;
  source: string;
  created_at: Date;
  runs: number;
}

export interface ImportBatchDoc {
  _id: string;
  import_id: string;
  batch: number;
  /** When an execution of the batch first got past its account read (see claimBatch). */
  claimed_at: Date;
  /** Creation time of the job that finished it: a retry of that job is not a rerun. */
  job_timestamp?: number;
  result?: ImportBatchResult;
  finished_at?: Date;
}

export const importsOf = (db: Db) => db.collection<ImportDoc>('imports');
export const importBatchesOf = (db: Db) => db.collection<ImportBatchDoc>('import_batches');

/** Creates the import's document on its first run, or returns the existing one; counts runs. */
export async function openImport(db: Db, doc: Omit<ImportDoc, 'runs' | 'created_at'>): Promise<ImportDoc> {
  const found = await importsOf(db).findOneAndUpdate(
    { _id: doc._id },
    { $setOnInsert: { batch_size: doc.batch_size, source: doc.source, created_at: new Date() }, $inc: { runs: 1 } },
    { upsert: true, returnDocument: 'after' },
  );
  return found!;
}

export async function findImport(db: Db, importId: string): Promise<ImportDoc | null> {
  return importsOf(db).findOne({ _id: importId });
}

type FinishedBatchDoc = ImportBatchDoc & { result: ImportBatchResult; job_timestamp: number };

/** A batch is finished (its debits applied, its records charged) once storeBatchResult wrote its result. */
function isFinished(doc: Partial<ImportBatchDoc>): doc is FinishedBatchDoc {
  return doc.result !== undefined && doc.job_timestamp !== undefined;
}

export async function finishedBatch(db: Db, batchId: string): Promise<FinishedBatchDoc | null> {
  const doc = await importBatchesOf(db).findOne({ _id: batchId });
  return doc && isFinished(doc) ? doc : null;
}

/**
 * Claims a batch: true for the first execution ever, false when an earlier (crashed) or concurrent
 * execution exists. Only the first may skip reading its debit markers (see batch.ts).
 */
export async function claimBatch(db: Db, batchId: string, importId: string, batch: number): Promise<boolean> {
  try {
    await importBatchesOf(db).insertOne({ _id: batchId, import_id: importId, batch, claimed_at: new Date() });
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}

/**
 * Stores a batch's result (on the claim every execution made first), after all its debits: from here
 * on its records count as charged. Every execution computes the same result.
 */
export async function storeBatchResult(db: Db, batchId: string, jobTimestamp: number, result: ImportBatchResult): Promise<void> {
  await importBatchesOf(db).updateOne({ _id: batchId }, { $set: { result, job_timestamp: jobTimestamp, finished_at: new Date() } });
}

/** Whether the debits of the batch that wrote an 'imported' record are applied ('running': not yet). */
export async function batchDebitState(db: Db, batchId: string): Promise<'done' | 'running' | 'unknown'> {
  // The result itself (refusals, totals) is not needed; `result.lines` stands for it in the predicate.
  const doc = await importBatchesOf(db).findOne({ _id: batchId }, { projection: { _id: 1, job_timestamp: 1, 'result.lines': 1 } });
  if (!doc) return 'unknown';
  return isFinished(doc) ? 'done' : 'running';
}
