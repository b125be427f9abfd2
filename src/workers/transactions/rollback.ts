import { callId, TransactionDoc } from '../../shared/domain/types';
import { batchDebitState, BatchDebitState } from '../../shared/ledger';
import { decideAbandoned, decideDone } from '../../shared/outcomes';
import type { OperationResult, RollbackJob } from '../../shared/queues/payloads';
import { removeEntry } from './begin';
import { JobRef, timedOut } from './decide';
import { beforeDeadline, Reasons, TransactionDeps } from './deps';
import { refundRecord } from './refund';

/**
 * rollbackTransaction, decided per party (the caller, its parents, the receiver), each by what it holds
 * of this call (the caller's tag, so a parent's entries and records of other callers are never touched):
 * - a running entry: removed without charge (by its unique id; if processing took it first, the
 *   party's record is handled below instead);
 * - a record: its fee given back once (ledger `refund:<record _id>`) if its charge was applied, then
 *   the record deleted. A record still being charged (recordTransaction in flight or interrupted) is
 *   charged first, so the refund always has a charge to match.
 * Answers ok when any party held the call; NOT_FOUND when none did. Unlike begin, end and record, a
 * rollback is decided before its changes (a refund is not taken back): once decided 'done' it is
 * carried out, by this job, its re-run after a crash, or the recovery sweep; abandoned by the
 * agent first, it changes nothing. Every step is safe to repeat: it never refunds twice.
 */
export async function rollback(deps: TransactionDeps, job: RollbackJob, ref: JobRef): Promise<OperationResult> {
  const { accounts, transactions, outcomes } = deps.ctx.mongo.collections;
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

  const held = records.size > 0 || (await anyEntry(deps, [...parties], call));
  if (!held) {
    // A re-run of a rollback that was decided and carried out before a crash finds nothing left.
    const prior = await outcomes.findOne({ _id: ref.id });
    return prior?.state === 'done' && prior.result ? prior.result : { ok: false, reason: Reasons.NOT_FOUND };
  }
  const opRef = { jobId: ref.id, op: 'rollback', account_tag: job.account_tag, transaction_tag: tag, parties: [...parties] };
  const intime = beforeDeadline(ref.deadline);
  const decision = intime ? await decideDone(outcomes, opRef, { ok: true, reason: null }) : await decideAbandoned(outcomes, opRef);
  const state = decision.won ? (intime ? 'done' : 'abandoned') : decision.doc.state;
  if (state === 'abandoned') return timedOut;
  await applyRollback(deps, job.account_tag, tag, [...parties], batches);
  await outcomes.updateOne({ _id: ref.id }, { $set: { applied_at: new Date() } });
  return { ok: true, reason: null };
}

async function anyEntry(deps: TransactionDeps, parties: string[], call: string): Promise<boolean> {
  for (const party of parties) {
    const account = await deps.ctx.mongo.collections.accounts.findOne({ account_tag: party, 'running_transactions.call_id': call }, { projection: { _id: 1 } });
    if (account) return true;
  }
  return false;
}

/**
 * The changes of a decided rollback, per party; each safe to repeat. Exported for the recovery sweep,
 * which finishes a rollback decided 'done' whose job was lost.
 */
export async function applyRollback(
  deps: TransactionDeps,
  callerTag: string,
  tag: string,
  parties: string[],
  batches: ReadonlyMap<string, BatchDebitState> = new Map(),
): Promise<void> {
  const { accounts, transactions } = deps.ctx.mongo.collections;
  const call = callId(callerTag, tag);
  for (const party of parties) {
    const account = await accounts.findOne({ account_tag: party }, { projection: { running_transactions: 1 } });
    const entry = account?.running_transactions.find((r) => r.call_id === call);
    if (entry && (await removeEntry(deps, party, entry.id))) continue;
    // No entry (or processing took it just now): the party's record, if any, as it is now.
    const record = await transactions.findOne({ account_tag: party, transaction_tag: tag, origin_account_tag: callerTag });
    if (record) await refundRecord(deps, record, batches);
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

