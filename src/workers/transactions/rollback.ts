import { callId, TransactionDoc } from '../../shared/domain/types';
import { applyOnce, batchDebitState, BatchDebitState, opIds, wasApplied } from '../../shared/ledger';
import { recordCredit } from '../../shared/metrics';
import type { OperationResult, RollbackJob } from '../../shared/queues/payloads';
import { removeEntry } from './begin';
import { beforeDeadline, Reasons, TransactionDeps } from './deps';

/**
 * rollbackTransaction, decided per party (the caller, its parents, the receiver), each by what it holds
 * of this call (the caller's tag, so a parent's entries and records of other callers are never touched):
 * - a running entry: removed without charge (by its unique id; if processing took it first, the
 *   party's record is handled below instead);
 * - a record: its fee given back once (ledger `refund:<record _id>`) if its charge was applied, then
 *   the record deleted. A record still being charged (recordTransaction in flight or interrupted) is
 *   charged first, so the refund always has a charge to match.
 * Answers ok when any party held the call; NOT_FOUND when none did. Every step is safe to repeat, so
 * a rollback retried after a crash finishes the work and never refunds twice.
 */
export async function rollback(deps: TransactionDeps, job: RollbackJob): Promise<OperationResult> {
  const { accounts, transactions } = deps.ctx.mongo.collections;
  const tag = job.transaction_tag;
  const call = callId(job.account_tag, tag);
  const caller = await accounts.findOne({ account_tag: job.account_tag }, { projection: { running_transactions: 1 } });
  const callerRecord = await transactions.findOne({ account_tag: job.account_tag, transaction_tag: tag, origin_account_tag: job.account_tag });
  const callerEntry = caller?.running_transactions.find((r) => r.call_id === call);
  const parties = new Set<string>([job.account_tag, ...(callerEntry?.call_parties ?? []), ...(callerRecord?.call_parties ?? [])]);

  // Records of import batches still running must not be deleted under them: wait for each batch first
  // (answering TIMEOUT, having changed nothing, if one takes too long).
  const records = new Map<string, TransactionDoc>();
  for (const party of parties) {
    const found = party === job.account_tag ? callerRecord : await transactions.findOne({ account_tag: party, transaction_tag: tag, origin_account_tag: job.account_tag });
    if (found) records.set(party, found);
  }
  const batches = new Map<string, BatchDebitState>();
  for (const r of records.values()) {
    if (r.state !== 'imported' || !r.charge_op || batches.has(r.charge_op)) continue;
    const state = await batchStateBy(deps, r.charge_op, job.deadline);
    if (state === 'running') return { ok: false, reason: Reasons.TIMEOUT };
    batches.set(r.charge_op, state);
  }

  let found = false;
  for (const party of parties) {
    const account = party === job.account_tag ? caller : await accounts.findOne({ account_tag: party }, { projection: { running_transactions: 1 } });
    const entry = account?.running_transactions.find((r) => r.call_id === call);
    if (entry && (await removeEntry(deps, party, entry.id))) {
      found = true;
      continue;
    }
    // No entry (or processing took it just now): the party's record, if any.
    const record = entry
      ? await transactions.findOne({ account_tag: party, transaction_tag: tag, origin_account_tag: job.account_tag })
      : records.get(party);
    if (!record) continue;
    found = true;
    await refundRecord(deps, record, batches);
  }
  return found ? { ok: true, reason: null } : { ok: false, reason: Reasons.NOT_FOUND };
}

/** Gives a record's fee back if it was charged (once: `refund:<_id>`), then deletes the record. */
async function refundRecord(deps: TransactionDeps, record: TransactionDoc, batches: ReadonlyMap<string, BatchDebitState>): Promise<void> {
  const { transactions } = deps.ctx.mongo.collections;
  if (await charged(deps, record, batches)) {
    await transactions.updateOne({ _id: record._id }, { $set: { state: 'rolling_back' } });
    const refund = await applyOnce(deps.ctx.mongo.collections, {
      op: opIds.refund(record._id),
      account_tag: record.account_tag,
      amount: record.fee,
      kind: 'refund',
      transaction_tag: record.transaction_tag,
      ref: record._id,
    });
    if (refund.outcome === 'applied') recordCredit(deps.ctx, record.fee);
  }
  await transactions.deleteOne({ _id: record._id });
}

/**
 * Whether a record's fee was taken. Records written through the API (no state) never were; 'charged'
 * and 'rolling_back' ones were. An 'imported' one was if its batch's debit of that account is in the
 * ledger. A 'pending' one of processing was if its charge is in the ledger (its entry is gone, so it
 * can no longer be charged); a 'pending' one of recordTransaction is charged now, so that the record
 * job, wherever it is, finds its charge done and the refund below matches it.
 */
async function charged(deps: TransactionDeps, record: TransactionDoc, batches: ReadonlyMap<string, BatchDebitState>): Promise<boolean> {
  const store = deps.ctx.mongo.collections;
  switch (record.state) {
    case undefined:
      return false;
    case 'charged':
    case 'rolling_back':
      return true;
    case 'imported':
      return (
        record.charge_op !== undefined &&
        batches.get(record.charge_op) !== 'running' &&
        (await wasApplied(store, record.account_tag, opIds.importDebit(record.charge_op, record.account_tag)))
      );
    case 'pending': {
      const charge = opIds.charge(record._id);
      if (record.charged_by !== 'record') return wasApplied(store, record.account_tag, charge);
      await applyOnce(store, { op: charge, account_tag: record.account_tag, amount: -record.fee, kind: 'charge', transaction_tag: record.transaction_tag, ref: record._id });
      return true;
    }
  }
}

/** Polls an import batch until its debits are done or it is unknown, or the agent's deadline comes near ('running'). */
async function batchStateBy(deps: TransactionDeps, batchId: string, deadline: number): Promise<BatchDebitState> {
  for (;;) {
    const state = await batchDebitState(deps.ctx.mongo.db, batchId);
    if (state !== 'running' || !beforeDeadline(deadline, BATCH_POLL_MS)) return state;
    await new Promise((resolve) => setTimeout(resolve, BATCH_POLL_MS));
  }
}

const BATCH_POLL_MS = 100;

