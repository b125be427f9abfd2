import { callId, type RunningTransaction } from '../../shared/domain/types';
import { notFenced } from '../../shared/domain/calls/decisions';
import { beforeDeadline, done, type EndJob, type OperationResult } from '../../shared/domain/calls';
import { chargeOp, finishGuarded, opIds, wasApplied, writeGuarded } from '../../shared/domain/ledger';
import type { JobRef } from './decide';
import { processingDeps, type TransactionDeps } from './deps';
import type { ProcessingJob } from '../../shared/domain/queues/payloads';
import { afterDebit, markCharged, placeRecord, replaceIfStale } from './record-store';
import { recordOfEntry } from './records';

/**
 * How long a record's charged mark waits for company (a later call's record write) before it is sent
 * alone: a fifth of a second, so that calls a few milliseconds apart share the command while an idle
 * process still marks within moments.
 */
const CHARGED_MARK_WAIT_MS = 200;

/** An end's answer, and the processing jobs of the entries it ended (none unless decided 'done'). */
export interface EndOutcome {
  result: OperationResult;
  toProcess: ProcessingJob[];
  /** What an end that charged in its own write finishes once the agent has its answer (endAndCharge). */
  afterAnswer?: () => Promise<void>;
}

/**
 * A single-party call ended and charged by one write (issue 36, docs/ARCHITECTURE.md "End"): from the
 * entry this process kept when it began the call (BegunEntries), or else read from the account (end.ts,
 * readEntryToCharge), the end rates the call and
 *  1. inserts the call's record 'pending' (its `_id` the entry's, as processing's: the same intent
 *     first, the same charge id, so everything that meets it reads it as processing's record);
 *  2. in one write on the account, conditional on the entry being in progress and decided by its begin
 *     and on this job not being fenced (abandoned by the agent), removes the entry and debits the fee
 *     with its ledger marker. That write is the end's decision and its charge: nothing is ended without
 *     being charged, and a job the agent gave up on cannot make it;
 *  3. after the answer (`afterAnswer`): the ledger entry, and the record marked charged (the mark
 *     travels with the next call's step 1, so a call costs one command less in the steady state).
 * The decision needs no document: the record names the end job, and the charge its marker or ledger
 * entry (decidedBy in src/shared/domain/calls/decisions.ts reads both). Null when the write does not
 * apply (the entry changed, the job is fenced or late): the pending record is taken back and the end
 * is decided as any end, on what MongoDB holds (end.ts). A crash between 1 and 2 leaves a pending
 * record of an entry still in progress: the call's next end replaces it (record-store.ts), a rollback
 * or the recovery sweep drops it with the entry.
 */
export async function endAndCharge(deps: TransactionDeps, job: EndJob, ref: JobRef, begun: RunningTransaction): Promise<EndOutcome | null> {
  if (!beforeDeadline(ref.deadline)) return null;
  const { transactions } = deps.ctx.mongo.collections;
  const ended: RunningTransaction = { ...begun, in_progress: false, timestamp_end: new Date(job.timestamp_end), end_job: ref.id };
  const record = recordOfEntry(job.account_tag, ended);
  const { existing } = await placeRecord(transactions, record);
  // Another call's record under this tag, or this entry already charged: decided the long way.
  if (existing && (existing._id !== record._id || existing.state !== 'pending')) return null;
  // A pending record of another end: kept when its charge is applied (then decided the long way), else
  // replaced by this end's, and put back if this end's write misses (record-store.ts).
  const kept = existing && (await replaceIfStale(deps.ctx.mongo.collections, existing, record));
  if (kept && kept.end_job !== ref.id) return null;
  const replaced = existing && !kept ? existing : null;
  const applied = await writeGuarded(
    deps.ctx.mongo.collections,
    chargeOp(record),
    {
      ...notFenced(ref.id),
      running_transactions: { $elemMatch: { id: begun.id, in_progress: true, begin_decided: true, reserved_until: null } },
    },
    { $pull: { running_transactions: { id: begun.id } } },
  );
  if (!applied) {
    // Not this end's: its record goes (only while it is still pending and this end's), or the record it
    // replaced comes back. That one's end cannot have charged before this end replaced it (checked), but
    // may have since (two processes holding the entry): its record must then be there, and otherwise it
    // is the stale record it was, for the call's next end, a rollback or the sweep. A record this job
    // found already written by an earlier run of itself stays when that run's charge applied (it was
    // killed after its write, and this process still held the entry): the call is charged, and the long
    // way answers so (end.ts).
    const mine = { _id: record._id, account_tag: job.account_tag, state: 'pending' as const, end_job: ref.id };
    if (replaced) await transactions.replaceOne(mine, replaced);
    else if (!kept || !(await wasApplied(deps.ctx.mongo.collections, job.account_tag, opIds.charge(record._id))))
      await transactions.deleteOne(mine);
    return null;
  }
  deps.decisions?.remember(ref.id, { state: 'done', made: [{ account_tag: job.account_tag, entry_id: begun.id }], result: done() });
  const processing = processingDeps(deps);
  const store = processing.ctx.mongo.collections;
  return {
    result: done(),
    toProcess: [],
    afterAnswer: async () => {
      await finishGuarded(store, job.account_tag, applied.marker, undefined, deps.settledMarkers);
      afterDebit(deps.ctx, applied.account, record.fee);
      // The charged mark rides with the process's next record write (a later call's step 1), or leaves
      // alone after CHARGED_MARK_WAIT_MS. Nobody waits on it: every reader of a pending record settles it
      // from the ledger, and one left behind (a crash) is marked by the recovery sweep (reconcile.ts).
      void markCharged(store.transactions, job.account_tag, record._id, CHARGED_MARK_WAIT_MS).catch((err: unknown) =>
        deps.ctx.logger.warn({ err, record: record._id }, 'charged mark not written; the recovery sweep will'),
      );
    },
  };
}

/** A call with one party: its begin and end are decided by their own writes (docs/AGENT.md). */
export const isSingleParty = (entry: RunningTransaction): boolean => (entry.call_parties?.length ?? 1) === 1;

/** The entry this process began for the end's call, when it may end and charge it in one write. */
export function begunEntryOf(deps: TransactionDeps, job: EndJob): RunningTransaction | undefined {
  const entry = deps.begunEntries?.take(job.account_tag, callId(job.account_tag, job.transaction_tag));
  return entry && entry.begin_decided && isSingleParty(entry) ? entry : undefined;
}
