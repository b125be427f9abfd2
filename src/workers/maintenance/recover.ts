import type { AccountDoc, TransactionDoc } from '../../shared/domain/types';
import { chunks } from '../../shared/infra/chunks';
import { importBatchesOf, markBatchDecided, settle, settleImportSlots, settleLeftBehind } from '../../shared/domain/ledger';
import { ROLLBACK_OUTCOMES, UNSETTLED_RECORDS } from '../../shared/domain/store';
import { abandonUnlessDecided, type OutcomeDoc } from '../../shared/domain/calls';
import { undoAgentBatch } from '../imports/undo';
import { beginRecovery } from '../transactions/begin';
import { resumeReratings } from '../rerating/batch';
import type { TransactionDeps } from '../transactions/deps';
import { endRecovery } from '../transactions/end';
import { processingRecovery } from '../transactions/reconcile';
import { recordRecovery } from '../transactions/record';
import { settleDecided, stands, type EntryRecovery, type RecordRecovery } from '../transactions/recovery';
import { refundRecord } from '../transactions/refund';
import { finishDecidedRollbacks } from '../transactions/rollback';

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
  /** Rerating runs whose next batch was queued again (its job lost or failed for good). */
  reratingsResumed: number;
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
 * - file import batches finished but never settled, and settlements left unfinished: settled;
 * - rerating runs that have not moved for a while: their next batch queued again (a record's own
 *   rerating under way is finished by the run's batch, or by a rollback that meets it).
 * Ended calls whose processing job was lost are queued again by requeue-ended.ts.
 */
export async function recoverInterrupted(deps: TransactionDeps, now: Date = new Date()): Promise<RecoveryResult> {
  const result: RecoveryResult = {
    markersSettled: 0,
    beginsUndone: 0,
    endsUndone: 0,
    recordsFinished: 0,
    recordsUndone: 0,
    rollbacksFinished: 0,
    batchesUndone: 0,
    batchesSettled: 0,
    entriesSettled: 0,
    decisionsPruned: 0,
    reratingsResumed: 0,
  };
  const cutoff = now.getTime() - takeoverAfterMs(deps);
  await settleMarkers(deps, cutoff, result);
  result.batchesSettled = await settleLeftBehind(deps.ctx.mongo.collections, deps.ctx.mongo.db, cutoff);
  await undecidedAgentBatches(deps, cutoff, result);
  await undecidedEntries(deps, cutoff, result);
  await interruptedRecords(deps, cutoff, result);
  result.rollbacksFinished = await finishDecidedRollbacks(deps, cutoff);
  result.decisionsPruned = await pruneDecisions(deps, now, cutoff);
  result.reratingsResumed = await resumeReratings(deps, takeoverAfterMs(deps), now);
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
  const slots = await accounts
    .find({ import_marker: { $ne: null } }, { projection: { _id: 0, account_tag: 1, import_marker: 1 } })
    .toArray();
  const stale = slots.filter((a) => a.import_marker && a.import_marker.at.getTime() <= cutoff);
  result.markersSettled += await settleImportSlots(
    deps.ctx.mongo.collections,
    deps.ctx.mongo.db,
    stale.map((a) => ({ tag: a.account_tag, marker: a.import_marker! })),
  );
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

/** The operations whose state on a running entry waits on their decision, each with its own recovery. */
const ENTRY_RECOVERIES: readonly EntryRecovery[] = [beginRecovery, endRecovery];

async function undecidedEntries(deps: TransactionDeps, cutoff: number, result: RecoveryResult): Promise<void> {
  const { accounts } = deps.ctx.mongo.collections;
  const cursor = accounts.find<Pick<AccountDoc, 'account_tag' | 'running_transactions'>>(
    { 'running_transactions.0': { $exists: true } },
    { projection: { _id: 0, account_tag: 1, running_transactions: 1 } },
  );
  for await (const account of cursor) {
    const stale = ENTRY_RECOVERIES.flatMap((recovery) =>
      account.running_transactions.flatMap((entry) => {
        const pending = recovery.pending(entry);
        return pending && pending.deadline < cutoff ? [{ recovery, entry, jobId: pending.jobId }] : [];
      }),
    );
    if (stale.length === 0) continue;
    const decisions = await outcomesOf(
      deps,
      stale.map((s) => s.jobId),
    );
    for (const { recovery, entry, jobId } of stale) {
      const ref = { jobId, op: recovery.op, account_tag: entry.origin_account_tag, transaction_tag: entry.transaction_tag };
      if (await stands(deps, decisions.get(jobId), ref, { account_tag: account.account_tag, entry_id: entry.id })) {
        await settleDecided(deps, account.account_tag, entry.id, recovery.field, jobId);
        result.entriesSettled += 1;
      } else if (await recovery.undo(deps, account.account_tag, entry, jobId)) {
        if (recovery.op === 'begin') result.beginsUndone += 1;
        else result.endsUndone += 1;
      }
    }
  }
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
  // The fences of abandoned or refused begins and ends (decisions.ts) block a deciding write, which is
  // only ever made before the job's deadline: once that deadline is past the sweep's cutoff (a fence is
  // written at most an agent's wait before the deadline, or at most its abandonment's bound after), the sweep
  // has settled the job and its fence is spent. Kept a day, an account refused or timed out hundreds of
  // times a second grew by every one, on every read of the call path. A rollback's fence of a job
  // decided by its own write ('done': what says so once the entry is gone) goes with the decisions.
  const spent = cutoff - config.agentTimeoutMs - config.agentAbandonMs;
  const gone = [{ at: { $lt: new Date(spent) }, done: { $ne: true } }, { at: { $lt: new Date(before) } }];
  // One pass over the accounts holding fences, both kinds pulled by the same write.
  await deps.ctx.mongo.collections.accounts.updateMany(
    { 'fenced_jobs.at': { $lt: new Date(Math.max(spent, before)) } },
    { $pull: { fenced_jobs: { $or: gone } } },
  );
  return deletedCount;
}

/** The operations that leave records 'pending', by `charged_by`, each with its own recovery. */
const RECORD_RECOVERIES: Readonly<Record<NonNullable<TransactionDoc['charged_by']>, RecordRecovery>> = {
  record: recordRecovery,
  processing: processingRecovery,
};

async function interruptedRecords(deps: TransactionDeps, cutoff: number, result: RecoveryResult): Promise<void> {
  const records = await deps.ctx.mongo.collections.transactions.find(UNSETTLED_RECORDS).toArray();
  const decisions = await outcomesOf(
    deps,
    records.flatMap((r) => {
      const job = r.charged_by ? RECORD_RECOVERIES[r.charged_by].jobOf(r) : null;
      return job ? [job] : [];
    }),
  );
  for (const record of records) {
    if (record.state === 'rolling_back') {
      // Marked just before its refund; so for the takeover time, its rollback was interrupted.
      if (record.rolling_back_at && record.rolling_back_at.getTime() <= cutoff) {
        await refundRecord(deps, record);
        result.recordsUndone += 1;
      }
      continue;
    }
    const recovery = record.charged_by ? RECORD_RECOVERIES[record.charged_by] : undefined;
    if (!recovery || !recovery.due(record, cutoff)) continue;
    const job = recovery.jobOf(record);
    const done = await recovery.recover(deps, record, job ? decisions.get(job) : undefined);
    if (done === 'finished') result.recordsFinished += 1;
    else if (done === 'undone') result.recordsUndone += 1;
  }
}

async function undecidedAgentBatches(deps: TransactionDeps, cutoff: number, result: RecoveryResult): Promise<void> {
  const { db } = deps.ctx.mongo;
  const cursor = importBatchesOf(db).find({ deadline: { $lt: cutoff }, decided_at: { $exists: false } });
  for await (const batch of cursor) {
    const known = await deps.ctx.mongo.collections.outcomes.findOne({ _id: batch._id });
    const fate =
      known ??
      (await abandonUnlessDecided(deps.ctx.mongo.collections, {
        jobId: batch._id,
        op: 'record-batch',
        account_tag: '',
        transaction_tag: '',
      }));
    if (fate.state === 'done') {
      await markBatchDecided(db, batch._id);
      continue;
    }
    await undoAgentBatch(deps, batch._id, batch.result?.refused.map((r) => ({ line: r.line })) ?? []);
    result.batchesUndone += 1;
  }
}
