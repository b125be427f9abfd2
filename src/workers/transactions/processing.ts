import type { AccountDoc } from '../../shared/domain/types';
import type { ProcessingJob } from '../../shared/queues/payloads';
import type { TransactionDeps } from './deps';
import { afterDebit, applyBalanceChange, insertRecord, markCharged, opApplied, opIds } from './ledger';
import { ratedRecord } from './records';

export type ProcessingOutcome = 'charged' | 'already-done' | 'not-ended' | 'rolled-back' | 'gone';

/**
 * Rates an ended call of one account, saves its record, debits the balance and removes the running
 * entry. Idempotent at every step (DESIGN.md section 2), so a job retried after a crash anywhere, or
 * delivered twice, charges exactly once:
 *  1. insert the record (state 'pending') under the unique (account_tag, transaction_tag) index;
 *  2. one atomic account update, filtered on the entry still being there and the operation marker
 *     absent, removes the entry, debits the fee and pushes the marker;
 *  3. mark the record 'charged'.
 * When step 2 finds no entry, the marker tells whether we debited it earlier (finish step 3) or a
 * rollback removed it first (delete the pending record: the call is not charged).
 */
export async function processEndedCall(deps: TransactionDeps, job: ProcessingJob): Promise<{ outcome: ProcessingOutcome; fee: bigint; account?: AccountDoc }> {
  const { accounts, transactions } = deps.ctx.mongo.collections;
  const tag = job.transaction_tag;
  const op = opIds.process(tag);
  const account = await accounts.findOne({ account_tag: job.account_tag });
  const entry = account?.running_transactions.find((r) => r.transaction_tag === tag);
  if (!account || !entry) return { outcome: await reconcile(deps, job.account_tag, tag, op), fee: 0n };
  if (entry.in_progress || !entry.timestamp_end) return { outcome: 'not-ended', fee: 0n };

  const record = ratedRecord({
    transaction_tag: tag,
    account_tag: account.account_tag,
    source: entry.source,
    source_ip: entry.source_ip ?? null,
    destination: entry.destination,
    carrier_ip: entry.carrier_ip || null,
    tags: entry.tags ?? null,
    authorized: true,
    timestamp_auth: entry.timestamp_auth ?? null,
    timestamp_begin: entry.timestamp_begin,
    timestamp_end: entry.timestamp_end,
    inbound: entry.inbound,
    rate: entry.rate,
    call_parties: entry.call_parties ?? [account.account_tag],
  });
  const { existing } = await insertRecord(transactions, record);
  if (existing && existing.state !== 'pending') return { outcome: 'already-done', fee: 0n };
  const fee = existing ? existing.fee : record.fee;

  const applied = await applyBalanceChange(accounts, account.account_tag, -fee, op, {
    filter: { 'running_transactions.transaction_tag': tag },
    update: { $pull: { running_transactions: { transaction_tag: tag } } },
  });
  if (!applied) return { outcome: await reconcile(deps, account.account_tag, tag, op), fee: 0n };
  await markCharged(transactions, account.account_tag, tag);
  afterDebit(deps.ctx, applied, fee);
  return { outcome: 'charged', fee, account: applied };
}

async function reconcile(deps: TransactionDeps, accountTag: string, tag: string, op: string): Promise<ProcessingOutcome> {
  const { accounts, transactions } = deps.ctx.mongo.collections;
  const record = await transactions.findOne({ account_tag: accountTag, transaction_tag: tag });
  if (!record || record.state !== 'pending') return record ? 'already-done' : 'gone';
  if (await opApplied(accounts, accountTag, op)) {
    await markCharged(transactions, accountTag, tag);
    return 'already-done';
  }
  await transactions.deleteOne({ _id: record._id, state: 'pending' });
  return 'rolled-back';
}
