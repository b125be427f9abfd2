import type { AccountDoc, RunningTransaction } from '../../shared/domain/types';
import { chunks } from '../../shared/chunks';
import { applyOnce, importBatchesOf, markBatchDecided, opIds, settle, settleImportSlots, settleLeftBehind } from '../../shared/ledger';
import { ROLLBACK_OUTCOMES, UNSETTLED_RECORDS } from '../../shared/mongo';
import { undoAgentBatch } from '../imports/undo';
import { abandonUnlessDecided, covers, type OperationRef, type OutcomeDoc, type RollbackTarget } from '../../shared/calls/decisions';
import { removeEntry } from '../transactions/entries';
import type { TransactionDeps } from '../transactions/deps';
import { unEndEntry } from '../transactions/end';
import { reconcile } from '../transactions/reconcile';
import { markCharged } from '../transactions/record-store';
import { refundRecord } from '../transactions/refund';
import { applyRollback } from '../transactions/rollback';

/**
 * How long past an operation's deadline (or a marker's age) the sweep waits before it takes over:
 * long enough for the job (or its re-run after a worker's death, JOB_LOCK_MS) to finish on its own.
 */
export function takeoverAfterMs(deps: Pick<TransactionDeps, 'ctx'>): number {
  return takeoverMs(deps.ctx.config.jobLockMs);
}

export function takeoverMs(jobLockMs: number): number {
  return jobLockMs * 2 + 5000;
}

export interface RecoveryResult {
  markersSettled: number;
  beginsUndone: number;
  endsUndone: number;
  recordsFinished: number;
  recordsUndone: number;
  rollbacksFinished: number;
  batchesUndone: number;
  /** File import batches settled here (their importer stopped, or their settlement's job was lost). */
  batchesSettled: number;
  /** Running entries whose begin or end decision they now carry (settleDecided). */
  entriesSettled: number;
  /** Decisions deleted, past OUTCOME_RETENTION_SECONDS and settled. */
  decisionsPruned: number;
}

/**
 * The recovery sweep: finishes or undoes interrupted work from what MongoDB holds alone, so that losing
 * Redis (its jobs, its schedule) or a process costs time, never money or truth. It reads by scans,
 * which is fine off the hot path (one worker runs it every LONG_CALL_SCAN_SECONDS):
 * - ledger markers left on accounts: settled (the balance changed; the entry is written);
 * - running entries whose begin, or whose end, was never decided 'done' by their deadline: the
 *   operation is recorded abandoned (nobody was told it happened) and taken back;
 * - recordTransaction's records still 'pending': finished if decided 'done', else taken back;
 *   processing's: settled from the ledger (processing's own reconcile);
 * - records 'rolling_back': their refund finished and the record deleted;
 * - rollbacks decided 'done' whose job was lost before finishing: carried out;
 * - agent batches (recordTransactions) never decided by their deadline: taken back;
 * - file import batches finished but never settled, and settlements left unfinished: settled.
 * Ended calls whose processing job was lost are queued again by requeue-ended.ts.
 */
export async function recoverInterrupted(deps: TransactionDeps, now: Date = new Date()): Promise<RecoveryResult> {
  const result: RecoveryResult = { markersSettled: 0, beginsUndone: 0, endsUndone: 0, recordsFinished: 0, recordsUndone: 0, rollbacksFinished: 0, batchesUndone: 0, batchesSettled: 0, entriesSettled: 0, decisionsPruned: 0 };
  const cutoff = now.getTime() - takeoverAfterMs(deps);
  await settleMarkers(deps, cutoff, result);
  result.batchesSettled = await settleLeftBehind(deps.ctx.mongo.collections, deps.ctx.mongo.db, cutoff);
  await undecidedAgentBatches(deps, cutoff, result);
  await undecidedEntries(deps, cutoff, result);
  await interruptedRecords(deps, cutoff, result);
  await unfinishedRollbacks(deps, cutoff, result);
  result.decisionsPruned = await pruneDecisions(deps, now, cutoff);
  return result;
}

async function settleMarkers(deps: TransactionDeps, cutoff: number, result: RecoveryResult): Promise<void> {
  const { accounts } = deps.ctx.mongo.collections;
  const cursor = accounts.find({ 'ledger_pending.0': { $exists: true } }, { projection: { _id: 0, account_tag: 1, ledger_pending: 1 } });
  for await (const account of cursor) {
    for (const marker of account.ledger_pending ?? []) {
      if (marker.at.getTime() > cutoff) continue;
      // Only the ledger entry: whether its record is then charged is decided below (interruptedRecords),
      // by the record's own operation (a recordTransaction may have been abandoned since).
      await settle(deps.ctx.mongo.collections, account.account_tag, marker);
      result.markersSettled += 1;
    }
  }
  // Import batch debits keep their marker in one slot, settled by the next debit or here.
  const slots = await accounts.find({ import_marker: { $ne: null } }, { projection: { _id: 0, account_tag: 1, import_marker: 1 } }).toArray();
  const stale = slots.filter((a) => a.import_marker && a.import_marker.at.getTime() <= cutoff);
  result.markersSettled += await settleImportSlots(deps.ctx.mongo.collections, deps.ctx.mongo.db, stale.map((a) => ({ tag: a.account_tag, marker: a.import_marker! })));
}

/** The outcomes of these jobs, by id, in chunks. */
async function outcomesOf(deps: TransactionDeps, jobIds: string[]): Promise<Map<string, OutcomeDoc>> {
  const found = new Map<string, OutcomeDoc>();
  for (const part of chunks(jobIds)) {
    const docs = await deps.ctx.mongo.collections.outcomes.find({ _id: { $in: part } }).toArray();
    for (const doc of docs) found.set(doc._id, doc);
  }
  return found;
}

/**
 * Whether the operation that made this entry or record keeps it: decided 'done' with it among what it
 * made; otherwise (abandoned, never decided by its deadline, or made by a re-run after the decision)
 * it is taken back (an undecided operation is recorded abandoned now).
 */
async function stands(deps: TransactionDeps, known: OutcomeDoc | undefined, ref: OperationRef, share: RollbackTarget): Promise<boolean> {
  return covers(known ?? (await abandonUnlessDecided(deps.ctx.mongo.collections.outcomes, ref)), share);
}

async function undecidedEntries(deps: TransactionDeps, cutoff: number, result: RecoveryResult): Promise<void> {
  const { accounts } = deps.ctx.mongo.collections;
  const cursor = accounts.find<Pick<AccountDoc, 'account_tag' | 'running_transactions'>>(
    { 'running_transactions.0': { $exists: true } },
    { projection: { _id: 0, account_tag: 1, running_transactions: 1 } },
  );
  for await (const account of cursor) {
    const stale = (job: string | null | undefined, deadline: number | null | undefined): job is string => !!job && deadline != null && deadline < cutoff;
    const begins = account.running_transactions.filter((e) => stale(e.begin_job, e.begin_deadline));
    const ends = account.running_transactions.filter((e) => !e.in_progress && stale(e.end_job, e.end_deadline));
    if (begins.length === 0 && ends.length === 0) continue;
    const outcomes = await outcomesOf(deps, [...begins.map((e) => e.begin_job!), ...ends.map((e) => e.end_job!)]);
    const refOf = (e: RunningTransaction, jobId: string, op: string) => ({ jobId, op, account_tag: e.origin_account_tag, transaction_tag: e.transaction_tag });
    for (const entry of begins) {
      if (await stands(deps, outcomes.get(entry.begin_job!), refOf(entry, entry.begin_job!, 'begin'), { account_tag: account.account_tag, entry_id: entry.id })) {
        await settleDecided(deps, account.account_tag, entry.id, 'begin', entry.begin_job!);
        result.entriesSettled += 1;
        continue;
      }
      if (await removeEntry(deps, account.account_tag, entry.id)) result.beginsUndone += 1;
    }
    for (const entry of ends) {
      if (await stands(deps, outcomes.get(entry.end_job!), refOf(entry, entry.end_job!, 'end'), { account_tag: account.account_tag, entry_id: entry.id })) {
        await settleDecided(deps, account.account_tag, entry.id, 'end', entry.end_job!);
        result.entriesSettled += 1;
        continue;
      }
      await unEndEntry(accounts, account.account_tag, entry.end_job!, { id: entry.id });
      result.endsUndone += 1;
    }
  }
}

/**
 * A running entry whose begin (or end) is decided 'done' carries the decision from now on: its job id is
 * cleared, and an entry without one is a decided call to everyone who reads it (begin's duplicate check,
 * end, record, this sweep). So the decision may be deleted (pruneDecisions) while the call runs on for
 * days (LONG_CALL_SECONDS may be 31 days) or its processing keeps failing: issue 31, defect 3.
 */
async function settleDecided(deps: TransactionDeps, accountTag: string, entryId: string, op: 'begin' | 'end', jobId: string): Promise<void> {
  const field = op === 'begin' ? 'begin_job' : 'end_job';
  await deps.ctx.mongo.collections.accounts.updateOne(
    { account_tag: accountTag, running_transactions: { $elemMatch: { id: entryId, [field]: jobId } } },
    { $set: { [`running_transactions.$[e].${field}`]: null } },
    { arrayFilters: [{ 'e.id': entryId, [`e.${field}`]: jobId }] },
  );
}

/**
 * Deletes decisions older than OUTCOME_RETENTION_SECONDS, last in the sweep, once everything before it
 * settled what they decide (an error anywhere above skips this). Never one younger than the sweep's own
 * horizon (its cutoff less an agent's wait): an entry whose deadline is past the cutoff was settled
 * above, and a decision is written at most one wait before its deadline. A rollback decided but not yet
 * carried out is kept whatever its age. Done here rather than by a TTL index, which would delete on
 * time whether or not the sweep ran.
 */
async function pruneDecisions(deps: TransactionDeps, now: Date, cutoff: number): Promise<number> {
  const { config } = deps.ctx;
  const before = Math.min(now.getTime() - config.outcomeRetentionSeconds * 1000, cutoff - config.agentTimeoutMs);
  const { deletedCount } = await deps.ctx.mongo.collections.outcomes.deleteMany({
    at: { $lt: new Date(before) },
    $or: [{ op: { $ne: ROLLBACK_OUTCOMES.op } }, { applied_at: { $exists: true } }],
  });
  return deletedCount;
}

async function interruptedRecords(deps: TransactionDeps, cutoff: number, result: RecoveryResult): Promise<void> {
  const { transactions } = deps.ctx.mongo.collections;
  const records = await transactions.find(UNSETTLED_RECORDS).toArray();
  const byJob = await outcomesOf(deps, records.flatMap((r) => (r.record_job ? [r.record_job] : [])));
  for (const record of records) {
    if (record.state === 'rolling_back') {
      // Marked just before its refund; so for the takeover time, its rollback was interrupted.
      if (record.rolling_back_at && record.rolling_back_at.getTime() <= cutoff) {
        await refundRecord(deps, record);
        result.recordsUndone += 1;
      }
      continue;
    }
    if (record.charged_by === 'record') {
      if (record.record_deadline === undefined || record.record_deadline >= cutoff || !record.record_job) continue;
      const ref = { jobId: record.record_job, op: 'record', account_tag: record.origin_account_tag ?? record.account_tag, transaction_tag: record.transaction_tag };
      if (await stands(deps, byJob.get(record.record_job), ref, { account_tag: record.account_tag, record_id: record._id })) {
        await applyOnce(deps.ctx.mongo.collections, { op: opIds.charge(record._id), account_tag: record.account_tag, amount: -record.fee, kind: 'charge', transaction_tag: record.transaction_tag, ref: record._id });
        await markCharged(transactions, record.account_tag, record._id);
        result.recordsFinished += 1;
      } else {
        await refundRecord(deps, record);
        result.recordsUndone += 1;
      }
    } else if (record.charged_by === 'processing') {
      // While its running entry is there, processing (or requeue-ended) will charge it.
      if (await deps.ctx.mongo.collections.accounts.findOne({ account_tag: record.account_tag, 'running_transactions.id': record._id }, { projection: { _id: 1 } })) continue;
      const outcome = await reconcile(deps, record.account_tag, record._id);
      if (outcome === 'already-done') result.recordsFinished += 1;
      else if (outcome === 'rolled-back') result.recordsUndone += 1;
    }
  }
}

async function unfinishedRollbacks(deps: TransactionDeps, cutoff: number, result: RecoveryResult): Promise<void> {
  const { outcomes } = deps.ctx.mongo.collections;
  const cursor = outcomes.find({ ...ROLLBACK_OUTCOMES, state: 'done', applied_at: { $exists: false }, at: { $lt: new Date(cutoff) } });
  for await (const doc of cursor) {
    await applyRollback(deps, doc._id, doc.targets ?? []);
    result.rollbacksFinished += 1;
  }
}

async function undecidedAgentBatches(deps: TransactionDeps, cutoff: number, result: RecoveryResult): Promise<void> {
  const { db } = deps.ctx.mongo;
  const cursor = importBatchesOf(db).find({ deadline: { $lt: cutoff }, decided_at: { $exists: false } });
  for await (const batch of cursor) {
    const known = await deps.ctx.mongo.collections.outcomes.findOne({ _id: batch._id });
    const fate = known ?? (await abandonUnlessDecided(deps.ctx.mongo.collections.outcomes, { jobId: batch._id, op: 'record-batch', account_tag: '', transaction_tag: '' }));
    if (fate.state === 'done') {
      await markBatchDecided(db, batch._id);
      continue;
    }
    await undoAgentBatch(deps, batch._id, batch.result?.refused.map((r) => ({ line: r.line })) ?? []);
    result.batchesUndone += 1;
  }
}
