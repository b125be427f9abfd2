import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { chunks } from '../../infra/chunks';
import { isDuplicateKeyError } from '../../infra/mongo-errors';
import { applyBatchDebits, readBatchDebits } from './batch-debits';
import { importBatchesOf, type ImportBatchDoc } from './batches';
import type { LedgerStore } from './store';

/**
 * Settlements: the debits of file import batches, applied many batches at a time.
 *
 * A file batch does not debit its accounts itself: it stores its per-account totals with its result
 * (`debits`, `settle_pending`). The importer (src/shared/domain/imports/submit.ts) sends a settlement for the
 * batches it saw finish, every 500 batches or 30 s; the recovery sweep sends one for batches an importer left
 * behind. A settlement adds up its batches' totals and debits each account once, so an account pays
 * one update per settlement instead of one per batch: with 500 batches of 1000 calls, a uniform import
 * over 10,000 accounts writes 0.02 account updates per call instead of 0.95.
 *
 * Guarantees, on top of the ledger's (index.ts):
 * - A batch is settled by exactly one settlement. A settlement claims its batches with an update that
 *   matches only `settle_pending` and replaces it with `settled_by: <settlement>`; nothing sets
 *   `settle_pending` again (storeDeferredBatchResult writes only the first result), nor changes
 *   `settled_by`.
 * - A settlement's totals are fixed once its claim is done: the batches that name it, among the ones
 *   its document lists (written before the claim, and read by every later execution). Any execution,
 *   a retry after a crash or a duplicate running at once, sees the same batches and the same totals,
 *   and the debits go through applyBatchDebits under the settlement's id (`import:<settlement>:<account>`),
 *   so each is applied once.
 * - A batch's records count as charged once its settlement's debit of their account is in the ledger:
 *   never before the balance changed, never twice. That entry lists the batches it charges
 *   (`batches`), so the ledger alone proves it (the audit reads it there); rollbacks find it through
 *   the batch's `settled_by` (batchDebitState).
 * - Nothing is lost with Redis: a settlement's document stays `settle_pending` until its debits and
 *   entries are written, and the recovery sweep finishes any that stalled, and settles any finished
 *   batch left unclaimed.
 */

/** A new settlement's id: unique, so a settlement never meets another's document. */
export function newSettlementId(importId: string): string {
  return `imp/${importId}/s/${randomUUID()}`;
}

export interface SettlementResult {
  settlement_id: string;
  /** Batches this settlement settled (of those it was sent for; others were settled by another one). */
  batches: number;
  /** Accounts debited. */
  accounts: number;
}

/** A settlement's document fields beside the batch model's. */
type SettlementDoc = ImportBatchDoc & { settled_batches?: number; settled_accounts?: number };

/** Settles these finished file batches (those not settled by another settlement). Safe to repeat and to run twice at once. */
export async function settleImportBatches(
  store: LedgerStore,
  db: Db,
  settlementId: string,
  importId: string,
  batchIds: readonly string[],
  lap: (phase: string) => void = () => {},
): Promise<SettlementResult> {
  const docs = importBatchesOf(db);
  const members = await openSettlement(db, settlementId, importId, batchIds);
  if (members === 'done') return (await settlementDone(db, settlementId))!;
  for (const part of chunks(members)) {
    await docs.updateMany(
      { _id: { $in: part }, settle_pending: true, members: { $exists: false } },
      { $set: { settled_by: settlementId }, $unset: { settle_pending: '' } },
    );
  }
  lap('settle_claim');
  const totals = new Map<string, bigint>();
  const covers = new Map<string, string[]>();
  let settled = 0;
  for (const part of chunks(members)) {
    for (const batch of await docs
      .find({ _id: { $in: part }, settled_by: settlementId }, { projection: { _id: 1, debits: 1 } })
      .toArray()) {
      settled += 1;
      for (const d of batch.debits ?? []) {
        totals.set(d.account_tag, (totals.get(d.account_tag) ?? 0n) + d.amount);
        pushTo(covers, d.account_tag, batch._id);
      }
    }
  }
  // A total of 0 is debited too: its entry lists the batches whose free records it proves charged.
  lap('settle_read_batches');
  const initial = await readBatchDebits(store, settlementId, [...totals.keys()]);
  lap('settle_read_accounts');
  await applyBatchDebits(store, db, settlementId, totals, initial, (phase) => lap(`settle_${phase}`), covers);
  await docs.updateOne(
    { _id: settlementId },
    {
      $set: {
        debits_settled: true,
        finished_at: new Date(),
        settled_batches: settled,
        settled_accounts: totals.size,
      } as Partial<SettlementDoc>,
      $unset: { settle_pending: '' },
    },
  );
  lap('settle_done');
  return { settlement_id: settlementId, batches: settled, accounts: totals.size };
}

/** The settlement's batch list, as its document holds it (written now by the first execution), or 'done'. */
async function openSettlement(db: Db, settlementId: string, importId: string, batchIds: readonly string[]): Promise<string[] | 'done'> {
  const docs = importBatchesOf(db);
  const existing = await docs.findOne({ _id: settlementId }, { projection: { members: 1, debits_settled: 1 } });
  if (existing) return existing.debits_settled ? 'done' : (existing.members ?? []);
  try {
    await docs.insertOne({
      _id: settlementId,
      import_id: importId,
      batch: -1,
      claimed_at: new Date(),
      members: [...batchIds],
      settle_pending: true,
    });
    return [...batchIds];
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    return openSettlement(db, settlementId, importId, batchIds);
  }
}

/** Whether a settlement has applied its debits (its importer's fallback when the job's result is gone). */
export async function settlementDone(db: Db, settlementId: string): Promise<SettlementResult | null> {
  const doc = (await importBatchesOf(db).findOne({ _id: settlementId })) as SettlementDoc | null;
  return doc?.debits_settled
    ? { settlement_id: settlementId, batches: doc.settled_batches ?? 0, accounts: doc.settled_accounts ?? 0 }
    : null;
}

/**
 * The recovery sweep's part: settlements that stalled (their job lost or failed) are finished, and
 * finished batches nobody settled (their importer stopped) are settled, all last seen before `cutoff`.
 * Returns how many batches were settled.
 */
export async function settleLeftBehind(store: LedgerStore, db: Db, cutoff: number): Promise<number> {
  const docs = importBatchesOf(db);
  const open = await docs
    .find({ settle_pending: true }, { projection: { _id: 1, import_id: 1, members: 1, claimed_at: 1, finished_at: 1 } })
    .toArray();
  let settled = 0;
  for (const s of open.filter((d) => d.members && d.claimed_at.getTime() <= cutoff)) {
    settled += (await settleImportBatches(store, db, s._id, s.import_id, s.members!)).batches;
  }
  const byImport = new Map<string, string[]>();
  for (const b of open) {
    if (b.members || !b.finished_at || b.finished_at.getTime() > cutoff) continue;
    pushTo(byImport, b.import_id, b._id);
  }
  for (const [importId, batches] of byImport) {
    for (const part of chunks(batches))
      settled += (await settleImportBatches(store, db, newSettlementId(importId), importId, part)).batches;
  }
  return settled;
}

function pushTo(lists: Map<string, string[]>, key: string, value: string): void {
  const list = lists.get(key);
  if (list) list.push(value);
  else lists.set(key, [value]);
}
