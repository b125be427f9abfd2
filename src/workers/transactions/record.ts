import { callId, isReservation, type TransactionDoc } from '../../shared/domain/types';
import { applyOnce, chargeOp } from '../../shared/domain/ledger';
import { done, type OperationResult, type Reason, Reasons, type RecordJob } from '../../shared/domain/calls';
import { takeBackBegin } from './begin';
import { beginFate } from './fates';
import { conclude, decidedDone, JobRef } from './decide';
import { TransactionDeps } from './deps';
import { foreignRecordFate, refundRecord } from './refund';
import { finishPendingRollbacks } from './rollback';
import { resolveParties } from './parties';
import { rateParties } from './route';
import { ratedRecord } from './records';
import { releaseReservations } from './reservations';
import { afterDebit, insertRecord, markCharged } from './record-store';
import { stands, type RecordRecovery } from './recovery';

export type RecordOutcome = OperationResult & {
  /** Fee charged to the calling account (0 on refusal or duplicate). */
  fee: bigint;
  duplicate: boolean;
};

/**
 * recordTransaction: rates a finished call and, for each party, saves its record and charges it.
 * Every refusal is decided before anything is written. Then each party's record is written first
 * ('pending': the intent), and charged through the ledger under `charge:<record _id>`: a record id is
 * new on every insert, so a tag used again after a rollback is a new charge, and a re-run that finds
 * its own pending record finishes that record's charge instead of making another.
 * A caller's record already settled means the call was recorded before: DUPLICATE_TRANSACTION.
 * The operation is then concluded (decide.ts): abandoned by its deadline, its records are refunded
 * and deleted. Records written by this very job before a crash are its own: a re-run carries on.
 */
export async function record(deps: TransactionDeps, job: RecordJob, ref: JobRef): Promise<RecordOutcome> {
  // A re-run of a record decided 'done': its records were charged before the decision; only marking
  // them 'charged' follows it (a record rolled back since is gone and stays gone).
  const decided = await decidedDone(deps, ref);
  if (decided) {
    const { transactions } = deps.ctx.mongo.collections;
    await Promise.all((decided.made ?? []).map((r) => markCharged(transactions, r.account_tag, r.record_id!)));
    return { ...(decided.result ?? done()), fee: 0n, duplicate: false };
  }
  const outcome = await recordOnce(deps, job, ref);
  // A rollback of the same call answered ok but not carried out yet: finish it, then decide again.
  if (outcome.duplicate && (await finishPendingRollbacks(deps, job.account_tag, job.transaction_tag)) > 0)
    return recordOnce(deps, job, ref);
  return outcome;
}

async function recordOnce(deps: TransactionDeps, job: RecordJob, ref: JobRef): Promise<RecordOutcome> {
  const { accounts, transactions } = deps.ctx.mongo.collections;
  const refused = (reason: Reason): RecordOutcome => ({ ok: false, reason, fee: 0n, duplicate: reason === Reasons.DUPLICATE_TRANSACTION });
  const resolved = await resolveParties(accounts, job.account_tag, job.destination_account_tag);
  if ('refusal' in resolved) return refused(resolved.refusal.reason);
  // A call running under this tag is a duplicate (docs/AGENT.md), once its begin stands: recorded as
  // well, a rollback would find two shares of one call and the running entry would go on holding a
  // slot and lowering prepaid grants. The leftovers of an abandoned begin are taken back instead.
  const call = callId(job.account_tag, job.transaction_tag);
  const runningEntry = resolved.parties[0].account.running_transactions?.find((e) => e.call_id === call && !isReservation(e));
  if (runningEntry) {
    const begun = await beginFate(deps, runningEntry, job.account_tag, ref.deadline);
    if (begun === 'done') return refused(Reasons.DUPLICATE_TRANSACTION);
    if (begun === 'unknown') return refused(Reasons.TIMEOUT);
    await takeBackBegin(deps, job.account_tag, job.transaction_tag, runningEntry.begin_job!, { state: 'abandoned' });
  }
  const index = await deps.rating.index();
  const begin = new Date(job.timestamp_begin);
  const rated = rateParties(index, resolved.parties, { destination: job.destination, at: begin, carrierIp: job.carrier_ip });
  if (!Array.isArray(rated)) return refused(Reasons.UNREACHABLE_DESTINATION);
  const callParties = rated.map((r) => r.party.account.account_tag);
  const carrierIp = job.carrier_ip ?? rated[0].rate.carrierIp;

  // The intents: every party's record, before any balance changes.
  const written: Array<{ doc: TransactionDoc; fresh: boolean; freshAt: number | null }> = [];
  for (const [i, { party, rate }] of rated.entries()) {
    const doc = ratedRecord({
      transaction_tag: job.transaction_tag,
      account_tag: party.account.account_tag,
      origin_account_tag: job.account_tag,
      source: job.source,
      source_ip: job.source_ip,
      destination: job.destination,
      carrier_ip: carrierIp || null,
      tags: job.tags,
      authorized: null,
      timestamp_auth: job.timestamp_auth ? new Date(job.timestamp_auth) : null,
      timestamp_begin: begin,
      timestamp_end: new Date(job.timestamp_end),
      inbound: party.inbound,
      rate: rate.rate,
      call_parties: callParties,
      charged_by: 'record',
    });
    doc.record_job = ref.id;
    doc.record_deadline = ref.deadline;
    let { existing } = await insertRecord(transactions, doc);
    for (let attempt = 0; existing && existing.record_job !== ref.id && attempt < 3; attempt++) {
      // A record of this call from another operation (a client's retry, a rollback in progress).
      const fate = await foreignRecordFate(deps, existing, ref.deadline);
      if (fate === 'unknown') {
        await undoWritten(
          deps,
          written.map((w) => w.doc),
        );
        return refused(Reasons.TIMEOUT);
      }
      if (fate === 'stands') break;
      ({ existing } = await insertRecord(transactions, doc));
    }
    let ours = existing?.record_job === ref.id;
    // A linked account's record of an earlier use of this tag whose rollback was answered ok but is not
    // carried out on it yet (the caller's part is done, so the caller found no duplicate): carry it
    // out, then write this call's record. Taken for this call's, it would be deleted by that rollback.
    if (existing && !ours && i > 0 && (await finishPendingRollbacks(deps, job.account_tag, job.transaction_tag)) > 0) {
      ({ existing } = await insertRecord(transactions, doc));
      ours = existing?.record_job === ref.id;
    }
    if (existing && !ours) {
      // Only the caller's record decides: a settled one there is a duplicate call.
      if (i === 0) {
        await undoWritten(
          deps,
          written.map((w) => w.doc),
        );
        return refused(Reasons.DUPLICATE_TRANSACTION);
      }
      continue;
    }
    // The account was read (resolveParties) before this record existed: its charge was not applied then.
    written.push({ doc: existing ?? doc, fresh: !existing, freshAt: party.account.ledger_rev ?? null });
  }

  let callerFee = 0n;
  for (const { doc, fresh, freshAt } of written) {
    const result = await applyOnce(deps.ctx.mongo.collections, chargeOp(doc), fresh ? freshAt : undefined);
    if (result.outcome === 'applied') afterDebit(deps.ctx, result.account, doc.fee);
    if (doc.account_tag === job.account_tag) callerFee = doc.fee;
  }
  const made = written.map(({ doc }) => ({ account_tag: doc.account_tag, record_id: doc._id }));
  const opRef = { jobId: ref.id, op: 'record', account_tag: job.account_tag, transaction_tag: job.transaction_tag, made };
  let undone = new Set<string>();
  const result = await conclude(deps, opRef, ref.deadline, done(), async (undo) => {
    undone = new Set(undo.map((r) => r.record_id!));
    await undoWritten(
      deps,
      written.map((w) => w.doc).filter((doc) => undone.has(doc._id)),
    );
  });
  // 'charged' only once decided: until then a retry of the call waits for this one's fate.
  if (result.ok)
    await Promise.all(made.filter((r) => !undone.has(r.record_id)).map((r) => markCharged(transactions, r.account_tag, r.record_id)));
  // Reservations of this call seen on the parties (an authorization before the record): no slot is needed
  // any more. Only accounts that hold one are written to, so a record without one costs nothing more.
  const holders = resolved.parties
    .filter((p) => p.account.running_transactions?.some((e) => e.call_id === call && isReservation(e)))
    .map((p) => p.account.account_tag);
  if (result.ok && holders.length > 0) await releaseReservations(accounts, holders, call);
  return { ...result, fee: result.ok ? callerFee : 0n, duplicate: false };
}

/** Takes back records this operation wrote (refunding what was charged). */
async function undoWritten(deps: TransactionDeps, docs: TransactionDoc[]): Promise<void> {
  for (const doc of docs) {
    const current = await deps.ctx.mongo.collections.transactions.findOne({ _id: doc._id, account_tag: doc.account_tag });
    if (current) await refundRecord(deps, current);
  }
}

/**
 * Takes back the records the record job `jobId` of the call (caller, tag) wrote, on every party
 * (refunding what was charged). For a record abandoned after it failed midway. Safe to repeat.
 */
export async function takeBackRecord(deps: TransactionDeps, callerTag: string, transactionTag: string, jobId: string): Promise<void> {
  const { transactions } = deps.ctx.mongo.collections;
  const key = (tag: string) => ({ account_tag: tag, transaction_tag: transactionTag, origin_account_tag: callerTag });
  const caller = await transactions.findOne(key(callerTag));
  const parties = caller?.record_job === jobId ? (caller.call_parties ?? [callerTag]) : [callerTag];
  for (const tag of parties) {
    const doc = tag === callerTag ? caller : await transactions.findOne(key(tag));
    if (doc && doc.record_job === jobId) await refundRecord(deps, doc);
  }
}

/**
 * The recovery sweep's part for recordTransaction: a record still 'pending' past its job's deadline is
 * finished (charged, marked) if that job was decided 'done' with it, else refunded and deleted.
 */
export const recordRecovery: RecordRecovery = {
  due: (record, cutoff) => record.record_deadline !== undefined && record.record_deadline < cutoff && !!record.record_job,
  jobOf: (record) => record.record_job ?? null,
  recover: async (deps, record, decision) => {
    const ref = {
      jobId: record.record_job!,
      op: 'record',
      account_tag: record.origin_account_tag ?? record.account_tag,
      transaction_tag: record.transaction_tag,
    };
    if (!(await stands(deps, decision, ref, { account_tag: record.account_tag, record_id: record._id }))) {
      await refundRecord(deps, record);
      return 'undone';
    }
    await applyOnce(deps.ctx.mongo.collections, chargeOp(record));
    await markCharged(deps.ctx.mongo.collections.transactions, record.account_tag, record._id);
    return 'finished';
  },
};
