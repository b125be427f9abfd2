import crypto from 'node:crypto';
import type { Db } from 'mongodb';
import { isDuplicateKeyError } from '../../infra/mongo-errors';
import type { ImportBatchResult, ImportLine } from '../queues/payloads';
import { Reasons } from '../calls';

/**
 * Names of an import's pieces. A batch is identified by its import id and number; the same pair always
 * holds the same calls (docs/IMPORTS.md), so it serves as the BullMQ job id, the `_id` of its document
 * in `import_batches`, the owner (`charge_op`) of every record the batch writes, and part of the ledger
 * id of its debits (`import:<batch>:<account>`).
 */
export const IMPORT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export function importBatchId(importId: string, batch: number): string {
  return `imp/${importId}/${batch}`;
}

/**
 * What a batch holds, as a hash of its lines (each with its keys sorted, so the same calls hash alike
 * whatever built them). Kept on the batch's claim: an import id given again (`--import-id`) with other
 * calls would otherwise find its batches finished and answer their old results, the new calls never
 * written.
 */
export function batchDigest(lines: readonly ImportLine[]): string {
  const hash = crypto.createHash('sha256');
  for (const line of lines) hash.update(JSON.stringify(line, Object.keys(line).sort())).update('\n');
  return hash.digest('hex').slice(0, 32);
}

/** A batch id given again with other lines than its claim's (an import id reused for other calls). */
export class BatchContentMismatch extends Error {
  constructor(batchId: string) {
    super(
      `import batch ${batchId} was imported before with other lines: the input is not the one that import id was given for ` +
        '(use another --import-id; the earlier import stands as it was)',
    );
    this.name = 'BatchContentMismatch';
  }
}

/** Refuses a batch whose claim names other lines (claims older than the digest name none: not checked). */
export function checkBatchContent(claim: Pick<ImportBatchDoc, '_id' | 'lines_digest'>, digest: string): void {
  if (claim.lines_digest !== undefined && claim.lines_digest !== digest) throw new BatchContentMismatch(claim._id);
}

/**
 * The `_id` of the record a batch writes for one account and call (account, caller, tag): a name-based
 * UUID, so a retried batch writes the very same documents and can find them again by `_id`, while a
 * record of the same call written by anyone else (another batch, recordTransaction, processing) has a
 * different `_id` and is recognised as theirs.
 */
export function importRecordId(batchId: string, accountTag: string, originAccountTag: string, transactionTag: string): string {
  // The parts are joined by NUL, so hashing the joined string is hashing them one after the other (the ids of earlier versions).
  const h = sha256(`${batchId}\0${accountTag}\0${originAccountTag}\0${transactionTag}`);
  h[6] = (h[6] & 0x0f) | 0x50; // version 5 (name-based)
  h[8] = (h[8] & 0x3f) | 0x80; // RFC 4122 variant
  const x = h.toString('hex', 0, 16);
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/**
 * SHA-256 of a string: Node's one-shot `crypto.hash` where it exists (20.12 on), which spares the Hash
 * object an import would otherwise build per record; `createHash` on an older Node 20.
 */
const sha256: (text: string) => Buffer =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'buffer')
    : (text) => crypto.createHash('sha256').update(text).digest();

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
  /** batchDigest of its lines, set by the claim. */
  lines_digest?: string;
  /**
   * An agent batch (recordTransactions): its caller waits until `deadline` (epoch ms) and is answered
   * only if the batch is decided 'done' (src/shared/domain/calls/decisions.ts, under the batch id); `decided_at` is
   * set once it is. File imports have neither: their CLI waits as long as it takes.
   */
  deadline?: number;
  decided_at?: Date;
  /** Creation time of the job that finished it: a retry of that job is not a rerun. */
  job_timestamp?: number;
  result?: ImportBatchResult;
  /** Every debit of the batch has its ledger entry (set with the result by a batch that wrote them). */
  debits_settled?: boolean;
  finished_at?: Date;
  /**
   * A file batch's debits, left to a settlement (settlements.ts): the per-account totals of its own
   * records, stored with its result. `settle_pending` stays until a settlement claims the batch, which
   * then names itself in `settled_by` (set once, never changed).
   */
  debits?: BatchDebit[];
  settle_pending?: true;
  settled_by?: string;
  /** A settlement's document: the batches it was sent for (it settles those it claimed). */
  members?: string[];
}

/** One account's total in a batch whose debits wait for a settlement; a debit is positive (the amount taken). */
export interface BatchDebit {
  account_tag: string;
  amount: bigint;
}

export const importsOf = (db: Db) => db.collection<ImportDoc>('imports');
/** The same collection as `collections.importBatches` (src/shared/infra/mongo.ts), for code that holds the Db. */
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
export async function claimBatch(
  db: Db,
  batchId: string,
  importId: string,
  batch: number,
  deadline: number | null = null,
  digest?: string,
): Promise<boolean> {
  try {
    await importBatchesOf(db).insertOne({
      _id: batchId,
      import_id: importId,
      batch,
      claimed_at: new Date(),
      ...(deadline === null ? {} : { deadline }),
      ...(digest === undefined ? {} : { lines_digest: digest }),
    });
    return true;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
  }
  const claim = await importBatchesOf(db).findOne({ _id: batchId }, { projection: { lines_digest: 1 } });
  if (claim && digest !== undefined) checkBatchContent(claim, digest);
  return false;
}

/**
 * Stores a batch's result (on the claim every execution made first), after all its debits and their
 * ledger entries (`debits_settled`: the next debit of its accounts need not look its entries up): from
 * here on its records count as charged. Every execution computes the same result.
 */
export async function storeBatchResult(db: Db, batchId: string, jobTimestamp: number, result: ImportBatchResult): Promise<void> {
  await importBatchesOf(db).updateOne(
    { _id: batchId },
    { $set: { result, job_timestamp: jobTimestamp, finished_at: new Date(), debits_settled: true } },
  );
}

/**
 * Stores a file batch's result with its debits left to a settlement (settlements.ts). Only the first
 * execution to get here writes: `settle_pending` must never come back once a settlement has claimed the
 * batch (that would settle it twice), and every execution computes the same result and debits anyway.
 */
export async function storeDeferredBatchResult(
  db: Db,
  batchId: string,
  jobTimestamp: number,
  result: ImportBatchResult,
  debits: BatchDebit[],
): Promise<void> {
  await importBatchesOf(db).updateOne(
    { _id: batchId, result: { $exists: false } },
    { $set: { result, job_timestamp: jobTimestamp, finished_at: new Date(), debits, settle_pending: true } },
  );
}

/** An agent batch is decided 'done': its answer stands. */
export async function markBatchDecided(db: Db, batchId: string): Promise<void> {
  await importBatchesOf(db).updateOne({ _id: batchId }, { $set: { decided_at: new Date() } });
}

/** What an agent batch answers when nothing of it happened: every line TIMEOUT. */
export function timedOutBatchResult(batchId: string, lines: ReadonlyArray<{ line: number }>): ImportBatchResult {
  return {
    batch_id: batchId,
    lines: lines.length,
    rated: 0,
    duplicate_lines: [],
    refused: lines.map((l) => ({ line: l.line, reason: Reasons.TIMEOUT })),
    charged: '0',
    charged_linked: '0',
    replayed: false,
  };
}

/**
 * Where the debit of an 'imported' record's batch stands: 'done' once it is applied or known not to be
 * (`debitedBy` is then the id its ledger entries carry: the batch's own, or its settlement's);
 * 'running' while the batch has no result; 'settling' while a file batch's result waits for its
 * settlement's debits; 'unknown' without a batch document (the ledger under the batch's id is all there is).
 */
export type BatchDebitState = { state: 'done' | 'unknown'; debitedBy: string } | { state: 'running' | 'settling' };

export async function batchDebitState(db: Db, batchId: string): Promise<BatchDebitState> {
  // The result itself (refusals, totals) is not needed; `result.lines` stands for it in the predicate.
  const doc = await importBatchesOf(db).findOne(
    { _id: batchId },
    { projection: { _id: 1, job_timestamp: 1, 'result.lines': 1, settle_pending: 1, settled_by: 1 } },
  );
  if (!doc) return { state: 'unknown', debitedBy: batchId };
  if (!isFinished(doc)) return { state: 'running' };
  // A batch that left its debits to a settlement is `settle_pending` until one claims it, `settled_by` after.
  if (doc.settle_pending) return { state: 'settling' };
  if (!doc.settled_by) return { state: 'done', debitedBy: batchId };
  const settlement = await importBatchesOf(db).findOne({ _id: doc.settled_by }, { projection: { _id: 1, debits_settled: 1 } });
  return settlement?.debits_settled ? { state: 'done', debitedBy: doc.settled_by } : { state: 'settling' };
}
