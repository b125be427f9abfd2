import type { OperationResult, RollbackJob } from '../../shared/queues/payloads';
import { removeEntries } from './begin';
import type { TransactionDoc } from '../../shared/domain/types';
import { recordCredit } from '../../shared/metrics';
import { beforeDeadline, Reasons, TransactionDeps } from './deps';
import { applyBalanceChange, opApplied, opIds } from './ledger';
import { batchDebitState } from '../imports/registry';

/**
 * rollbackTransaction. A running (or ended, not yet processed) call is removed from every party
 * without charge. A processed call has each party's record deleted and its fee credited back, in
 * steps safe to retry: mark the record 'rolling_back', credit once (operation marker), delete it.
 */
export async function rollback(deps: TransactionDeps, job: RollbackJob): Promise<OperationResult> {
  const { accounts, transactions } = deps.ctx.mongo.collections;
  const tag = job.transaction_tag;
  const account = await accounts.findOne(
    { account_tag: job.account_tag, 'running_transactions.transaction_tag': tag },
    { projection: { running_transactions: 1 } },
  );
  const entry = account?.running_transactions.find((r) => r.transaction_tag === tag);
  if (entry) {
    await removeEntries(deps, entry.call_parties ?? [job.account_tag], tag);
    return { ok: true, reason: null };
  }

  const record = await transactions.findOne({ account_tag: job.account_tag, transaction_tag: tag });
  if (!record) return { ok: false, reason: Reasons.NOT_FOUND };
  const parties = record.call_parties?.length ? record.call_parties : [job.account_tag];
  const partyRecords: TransactionDoc[] = [];
  for (const partyTag of parties) {
    const partyRecord = partyTag === job.account_tag ? record : await transactions.findOne({ account_tag: partyTag, transaction_tag: tag });
    if (partyRecord) partyRecords.push(partyRecord);
  }
  // Deleting a record of an import batch that has not finished would let the batch write it again
  // (and debit it): wait for every such batch first, and answer TIMEOUT, having changed nothing, if one
  // takes too long. Each batch is read once; wasCharged uses what was read.
  const batches = new Map<string, BatchState>();
  for (const r of partyRecords) {
    if (r.state !== 'imported' || !r.charge_op || batches.has(r.charge_op)) continue;
    const state = await batchStateBy(deps, r.charge_op, job.deadline);
    if (state === 'running') return { ok: false, reason: Reasons.TIMEOUT };
    batches.set(r.charge_op, state);
  }
  for (const partyRecord of partyRecords) {
    if (await wasCharged(deps, partyRecord, batches)) {
      await transactions.updateOne({ _id: partyRecord._id }, { $set: { state: 'rolling_back' } });
      const credited = await applyBalanceChange(accounts, partyRecord.account_tag, partyRecord.fee, opIds.rollback(tag, partyRecord._id));
      if (credited) recordCredit(deps.ctx, partyRecord.fee);
    }
    await transactions.deleteOne({ _id: partyRecord._id });
  }
  return { ok: true, reason: null };
}

type BatchState = Awaited<ReturnType<typeof batchDebitState>>;

/** Polls an import batch until its debits are done or it is unknown, or the agent's deadline comes near ('running'). */
async function batchStateBy(deps: TransactionDeps, batchId: string, deadline: number): Promise<BatchState> {
  for (;;) {
    const state = await batchDebitState(deps.ctx.mongo.db, batchId);
    if (state !== 'running' || !beforeDeadline(deadline, BATCH_POLL_MS)) return state;
    await new Promise((resolve) => setTimeout(resolve, BATCH_POLL_MS));
  }
}

const BATCH_POLL_MS = 100;

/**
 * Whether a record's fee was taken from the balance. Records written through the API (no state) never
 * were. A 'pending' one was only if the marker of processing's or recordTransaction's debit is there;
 * otherwise a rollback removed its entry before processing could charge it. An 'imported' one was
 * when its batch finished (`batches`: read by rollback, which waited for each).
 */
async function wasCharged(deps: TransactionDeps, record: TransactionDoc, batches: ReadonlyMap<string, BatchState>): Promise<boolean> {
  if (record.state === undefined) return false;
  if (record.state === 'imported') return record.charge_op !== undefined && batches.get(record.charge_op) === 'done';
  if (record.state !== 'pending') return true;
  const { accounts } = deps.ctx.mongo.collections;
  for (const marker of [opIds.process(record.transaction_tag), opIds.record(record.transaction_tag)]) {
    if (await opApplied(accounts, record.account_tag, marker)) return true;
  }
  return false;
}
