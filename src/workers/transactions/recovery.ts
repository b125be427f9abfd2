import type { RunningTransaction, TransactionDoc } from '../../shared/domain/types';
import { abandonUnlessDecided, covers, type OperationRef, type OutcomeDoc, type RollbackTarget } from '../../shared/domain/calls';
import type { TransactionDeps } from './deps';

/**
 * What the recovery sweep (src/workers/maintenance/recover.ts) asks of each operation: every operation
 * that leaves state waiting on its decision says here how that state is found and how it is finished
 * or taken back, beside its own code (begin.ts, end.ts, record.ts, reconcile.ts, rollback.ts). The
 * sweep only reads MongoDB and calls these, so adding an operation cannot forget its recovery.
 */

/** A running entry whose state depends on an operation's decision (begin: it exists; end: it is ended). */
export interface EntryRecovery {
  op: 'begin' | 'end';
  /** The field of the entry that names the job; cleared once the entry carries the decision (settleDecided). */
  field: 'begin_job' | 'end_job';
  /** The job and its deadline when the entry still waits on that job's decision; null when it does not. */
  pending(entry: RunningTransaction): { jobId: string; deadline: number } | null;
  /** Takes back what the job made on this entry (its decision does not keep it); true when something changed. */
  undo(deps: TransactionDeps, accountTag: string, entry: RunningTransaction, jobId: string): Promise<boolean>;
}

/** A record left 'pending' by an operation, finished or taken back. */
export interface RecordRecovery {
  /** Whether the sweep may act on it now (its operation is past its deadline and takeover time). */
  due(record: TransactionDoc, cutoff: number): boolean;
  /** The job whose decision settles it, if any (read in bulk by the sweep). */
  jobOf(record: TransactionDoc): string | null;
  recover(deps: TransactionDeps, record: TransactionDoc, decision: OutcomeDoc | undefined): Promise<'finished' | 'undone' | null>;
}

/**
 * Whether the operation that made this entry or record keeps it: decided 'done' with it among what it
 * made; otherwise (abandoned, never decided by its deadline, or made by a re-run after the decision)
 * it is taken back (an undecided operation is recorded abandoned now).
 */
export async function stands(
  deps: TransactionDeps,
  known: OutcomeDoc | undefined,
  ref: OperationRef,
  share: RollbackTarget,
): Promise<boolean> {
  return covers(known ?? (await abandonUnlessDecided(deps.ctx.mongo.collections, ref)), share);
}

/**
 * A running entry whose begin (or end) is decided 'done' carries the decision from now on: its job id is
 * cleared, and an entry without one is a decided call to everyone who reads it (begin's duplicate check,
 * end, record, the sweep). So the decision may be deleted while the call runs on for days
 * (LONG_CALL_SECONDS may be 31 days) or its processing keeps failing: issue 31, defect 3.
 */
export async function settleDecided(
  deps: TransactionDeps,
  accountTag: string,
  entryId: string,
  field: EntryRecovery['field'],
  jobId: string,
): Promise<void> {
  await deps.ctx.mongo.collections.accounts.updateOne(
    { account_tag: accountTag, running_transactions: { $elemMatch: { id: entryId, [field]: jobId } } },
    { $set: { [`running_transactions.$[e].${field}`]: null } },
    { arrayFilters: [{ 'e.id': entryId, [`e.${field}`]: jobId }] },
  );
}
