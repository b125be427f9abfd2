import { callId, isReservation, TransactionDoc } from '../../shared/domain/types';
import { batchDebitState, BatchDebitState } from '../../shared/domain/ledger';
import { fenceJobs, type OutcomeDoc, type RollbackTarget } from '../../shared/domain/calls/decisions';
import { beforeDeadline, done, type OperationResult, Reasons, refused, type RollbackJob } from '../../shared/domain/calls';
import { ROLLBACK_OUTCOMES, UNDONE_ROLLBACKS } from '../../shared/domain/store';
import { removeEntry } from './entries';
import { decideByDeadline, JobRef, timedOut } from './decide';
import { TransactionDeps } from './deps';
import { beginFate, recordFate } from './fates';
import { refundRecord } from './refund';
import { releaseReservations } from './reservations';

/**
 * rollbackTransaction, decided per party (the caller, its parents, the receiver), each by what it holds
 * of this call (the caller's tag, so a parent's entries and records of other callers are never touched):
 * - a running entry or a reservation: removed without charge (by its unique id; if processing took it
 *   first, the record processing wrote under the entry's id is refunded instead);
 * - a record (also beside an entry: every charged record of the call goes): its fee given back once (ledger `refund:<record _id>`) if its charge was applied, then
 *   the record deleted. A record still being charged (recordTransaction in flight or interrupted) is
 *   charged first, so the refund always has a charge to match.
 * Answers ok when any party held the call; NOT_FOUND when none did. Unlike begin, end and record, a
 * rollback is decided before its changes (a refund is not taken back), with what it will take away
 * (entry and record ids, never tags): once decided 'done' exactly that is carried out, by this job,
 * its re-run after a crash, or the recovery sweep, even if the tag has been used again since; abandoned
 * by the agent first, it changes nothing. Every step is safe to repeat: it never refunds twice.
 */
export async function rollback(deps: TransactionDeps, job: RollbackJob, ref: JobRef): Promise<OperationResult> {
  const { outcomes } = deps.ctx.mongo.collections;
  // A re-run of a rollback decided before a crash carries out what was decided.
  const prior = await outcomes.findOne({ _id: ref.id });
  if (prior?.state === 'abandoned') return timedOut;
  if (prior?.state === 'done') {
    await applyRollback(deps, prior);
    return prior.result ?? done();
  }

  const found = await findTargets(deps, job.account_tag, job.transaction_tag, job.deadline);
  if (found === 'busy') return timedOut;
  if (found.targets.length === 0) return refused(Reasons.NOT_FOUND);
  const opRef = {
    jobId: ref.id,
    op: ROLLBACK_OUTCOMES.op,
    account_tag: job.account_tag,
    transaction_tag: job.transaction_tag,
    targets: found.targets,
  };
  const { state, earlier } = await decideByDeadline(deps, opRef, ref.deadline, done());
  if (state === 'abandoned') return timedOut;
  const decided = earlier ?? { _id: ref.id, account_tag: job.account_tag, transaction_tag: job.transaction_tag, targets: found.targets };
  await applyRollback(deps, decided, found.batches);
  return done();
}

/**
 * What each party holds of the call (caller, tag) now: its running entry, else its record. Records of
 * import batches still running must not be deleted under them: each such batch is waited for first
 * ('busy', having changed nothing, if one does not finish before the deadline).
 */
async function findTargets(
  deps: TransactionDeps,
  callerTag: string,
  tag: string,
  deadline: number,
): Promise<{ targets: RollbackTarget[]; batches: Map<string, BatchDebitState> } | 'busy'> {
  const { accounts, transactions } = deps.ctx.mongo.collections;
  const call = callId(callerTag, tag);
  const entryOf = async (party: string) =>
    (await accounts.findOne({ account_tag: party }, { projection: { running_transactions: 1 } }))?.running_transactions.find(
      (r) => r.call_id === call,
    );
  const recordOf = (party: string) => transactions.findOne({ account_tag: party, transaction_tag: tag, origin_account_tag: callerTag });
  let callerEntry = await entryOf(callerTag);
  // A caller's record of a deleted account (types.ts, closed_account) is the old customer's call, not the
  // tag's current holder's: none of its records on any party is taken (a parent's share of it stays), and
  // only what the current holder made of the tag (a reservation, a running entry) goes.
  let callerRecordFound = await recordOf(callerTag);
  // A begin or record of a linked call writes the caller's share first and the other parties' after,
  // and is decided once all are made: met half made, the rollback would take the caller's share, answer
  // ok, and the operation would then make the rest (a parent left running or charged). So it waits for
  // that decision first (past its own deadline: busy, TIMEOUT); the parties are then read as decided.
  const beginInFlight = callerEntry && !isReservation(callerEntry) && callerEntry.begin_job && !callerEntry.begin_decided;
  const recordInFlight = callerRecordFound?.state === 'pending' && callerRecordFound.record_job;
  if (beginInFlight || recordInFlight) {
    const fate = beginInFlight
      ? await beginFate(deps, callerEntry!, callerTag, deadline)
      : await recordFate(deps, callerRecordFound!, deadline);
    if (fate === 'unknown') return 'busy';
    callerEntry = await entryOf(callerTag);
    callerRecordFound = await recordOf(callerTag);
  }
  const oldCustomers = callerRecordFound?.closed_account !== undefined;
  const callerRecord = oldCustomers ? null : callerRecordFound;
  const parties = new Set<string>([callerTag, ...(callerEntry?.call_parties ?? []), ...(callerRecord?.call_parties ?? [])]);

  const targets: RollbackTarget[] = [];
  const records: TransactionDoc[] = [];
  for (const party of parties) {
    // Both, whatever mix a party holds: a record beside a reservation (an authorization that reused a
    // recorded call's tag, a record job killed before it released the call's reservations) or beside a
    // running entry. Taking only the entry would answer ok and leave the record charged.
    const entry = party === callerTag ? callerEntry : await entryOf(party);
    // On the caller, the jobs that began and ended what is taken are fenced as it goes (applyRollback).
    // A record's jobs were both decided 'done' (processing charges only ended calls whose end was).
    const fenceOf = (...jobs: Array<[string | null | undefined, boolean | undefined]>) => {
      const fence_jobs = party === callerTag ? jobs.flatMap(([job, done]) => (job ? [{ job, done: done === true }] : [])) : [];
      return fence_jobs.length > 0 ? { fence_jobs } : {};
    };
    if (entry) {
      const fences = fenceOf([entry.begin_job, entry.begin_decided], [entry.end_job, entry.end_decided]);
      targets.push({ account_tag: party, entry_id: entry.id, ...fences });
    }
    const record = party === callerTag ? callerRecord : oldCustomers ? null : await recordOf(party);
    if (record?.closed_account !== undefined) continue; // this party was deleted: its records are not the tag's holder's
    if (record && record._id !== entry?.id) {
      targets.push({ account_tag: party, record_id: record._id, ...fenceOf([record.begin_job, true], [record.end_job, true]) });
      records.push(record);
    }
  }
  const batches = new Map<string, BatchDebitState>();
  for (const r of records) {
    if (r.state !== 'imported' || !r.charge_op || batches.has(r.charge_op)) continue;
    const state = await batchStateBy(deps, r.charge_op, deadline);
    if (state.state === 'running' || state.state === 'settling') return 'busy';
    batches.set(r.charge_op, state);
  }
  return { targets, batches };
}

/**
 * Carries out a rollback decided 'done' (its outcome document, or what it holds), then marks it
 * applied. Each step is safe to repeat. Exported for the recovery sweep, and for begin and record, which
 * finish a pending rollback of a call before calling the call a duplicate.
 */
export async function applyRollback(
  deps: TransactionDeps,
  outcome: Pick<OutcomeDoc, '_id' | 'account_tag' | 'transaction_tag' | 'targets'>,
  batches: ReadonlyMap<string, BatchDebitState> = new Map(),
): Promise<void> {
  const { accounts, transactions, outcomes } = deps.ctx.mongo.collections;
  for (const target of outcome.targets ?? []) {
    // First the fences: a job of this call run again later (a worker killed, a restored queue) may then
    // neither begin nor end the call, nor a later call under the same tag (decisions.ts, fenceJobs).
    await fenceJobs(accounts, target.account_tag, target.fence_jobs ?? []);
    if (target.entry_id && (await removeEntry(deps, target.account_tag, target.entry_id))) continue;
    // Processing took the entry first: its record has the entry's id.
    const record = await transactions.findOne({ _id: target.record_id ?? target.entry_id, account_tag: target.account_tag });
    if (record) await refundRecord(deps, record, batches);
    // Neither: the entry's begin, undone meanwhile (abandoned), put back the reservation it was made
    // from (begin.ts, unmake), which would hold the call's slot and hold until it expires.
    else if (target.entry_id)
      await releaseReservations(accounts, [target.account_tag], callId(outcome.account_tag, outcome.transaction_tag));
  }
  await outcomes.updateOne({ _id: outcome._id }, { $set: { applied_at: new Date() } });
}

/**
 * Rollbacks of the call (caller, tag) answered ok but not yet carried out (their job slow, crashed or
 * lost): carried out now. Begin and record call this before refusing a tag as a duplicate, so that
 * the refusal is true once the workers are done.
 */
export async function finishPendingRollbacks(deps: TransactionDeps, callerTag: string, tag: string): Promise<number> {
  const pending = await deps.ctx.mongo.collections.outcomes
    .find({ account_tag: callerTag, transaction_tag: tag, ...UNDONE_ROLLBACKS })
    .toArray();
  for (const doc of pending) await applyRollback(deps, doc);
  return pending.length;
}

/** Polls an import batch until its debits are done or it is unknown, or the agent's deadline comes near ('running' or 'settling'). */
async function batchStateBy(deps: TransactionDeps, batchId: string, deadline: number): Promise<BatchDebitState> {
  for (;;) {
    const state = await batchDebitState(deps.ctx.mongo.db, batchId);
    if (!(state.state === 'running' || state.state === 'settling') || !beforeDeadline(deadline, BATCH_POLL_MS)) return state;
    await new Promise((resolve) => setTimeout(resolve, BATCH_POLL_MS));
  }
}

const BATCH_POLL_MS = 100;

/** The recovery sweep's part for rollback: rollbacks decided 'done' before `cutoff` and never carried out are carried out. */
export async function finishDecidedRollbacks(deps: TransactionDeps, cutoff: number): Promise<number> {
  const cursor = deps.ctx.mongo.collections.outcomes.find({
    ...UNDONE_ROLLBACKS,
    at: { $lt: new Date(cutoff) },
  });
  let finished = 0;
  for await (const doc of cursor) {
    await applyRollback(deps, doc);
    finished += 1;
  }
  return finished;
}
