import { createHash } from 'node:crypto';

/**
 * Names of an import's pieces. A batch is identified by its import id and number; the same pair always
 * holds the same calls (docs/IMPORTS.md), so it serves as the BullMQ job id, the `_id` of its document
 * in `import_batches`, and the owner (`charge_op`) of every record the batch writes.
 */
export const IMPORT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export function importBatchId(importId: string, batch: number): string {
  return `imp/${importId}/${batch}`;
}

/**
 * The marker a batch's debit pushes to each account's `applied_ops`: a 96-bit digest of the batch id
 * (18 characters instead of ~75). Every account a batch touches carries one, and an update costs in
 * proportion to the account document, so markers are kept short.
 */
export function importDebitMarker(batchId: string): string {
  return `b:${createHash('sha256').update(batchId).digest('base64url').slice(0, 16)}`;
}

/**
 * The `_id` of the record a batch writes for one account and call: a name-based UUID, so a retried
 * batch writes the very same documents and can find them again by `_id` (the only unique key the
 * store can look up in bulk with `$in`), while a record of the same call written by anyone else
 * (another batch, recordTransaction, processing) has a different `_id` and is recognised as theirs.
 */
export function importRecordId(batchId: string, accountTag: string, transactionTag: string): string {
  const h = createHash('sha256').update(batchId).update('\0').update(accountTag).update('\0').update(transactionTag).digest();
  h[6] = (h[6] & 0x0f) | 0x50; // version 5 (name-based)
  h[8] = (h[8] & 0x3f) | 0x80; // RFC 4122 variant
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** Splits a list into chunks; `$in` lists are kept short because the local test server matches them linearly. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
