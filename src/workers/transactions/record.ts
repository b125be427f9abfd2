import type { OperationResult, RecordJob } from '../../shared/queues/payloads';
import { Reasons, TransactionDeps } from './deps';
import { afterDebit, applyBalanceChange, insertRecord, markCharged, opIds } from './ledger';
import { resolveParties } from './parties';
import { PartyRate, rateParty } from './route';
import { ratedRecord } from './records';
import type { Party } from './parties';

export interface RecordOutcome extends OperationResult {
  /** Fee charged to the calling account (0 on refusal or duplicate). */
  fee: bigint;
  duplicate: boolean;
}

/**
 * recordTransaction: rates a finished call and, for each party, saves its record and debits it.
 * The debit carries an operation marker, so a retry after a crash charges once; a record already
 * 'charged' means the call was recorded before (a duplicate line of a CDR file, say).
 */
export async function record(deps: TransactionDeps, job: RecordJob): Promise<RecordOutcome> {
  const { accounts, transactions } = deps.ctx.mongo.collections;
  const refused = (reason: string): RecordOutcome => ({ ok: false, reason, fee: 0n, duplicate: reason === Reasons.DUPLICATE_TRANSACTION });
  const resolved = await resolveParties(accounts, job.account_tag, job.destination_account_tag);
  if ('refusal' in resolved) return refused(resolved.refusal.reason);
  const index = await deps.rating.index();
  const begin = new Date(job.timestamp_begin);
  const rated: Array<{ party: Party; rate: PartyRate }> = [];
  for (const party of resolved.parties) {
    const rate = rateParty(index, party.account, party.inbound, { destination: job.destination, at: begin, carrierIp: job.carrier_ip });
    if (!rate) return refused(Reasons.UNREACHABLE_DESTINATION);
    rated.push({ party, rate });
  }
  const callParties = rated.map((r) => r.party.account.account_tag);
  const carrierIp = job.carrier_ip ?? rated[0].rate.carrierIp;
  let callerFee = 0n;
  for (const [i, { party, rate }] of rated.entries()) {
    const accountTag = party.account.account_tag;
    const doc = ratedRecord({
      transaction_tag: job.transaction_tag,
      account_tag: accountTag,
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
    });
    const { existing } = await insertRecord(transactions, doc);
    if (existing && existing.state !== 'pending') {
      // Only the caller's record decides: a duplicate there is a duplicate call.
      if (i === 0) return refused(Reasons.DUPLICATE_TRANSACTION);
      continue;
    }
    const fee = existing ? existing.fee : doc.fee;
    const updated = await applyBalanceChange(accounts, accountTag, -fee, opIds.record(job.transaction_tag));
    await markCharged(transactions, accountTag, job.transaction_tag);
    if (updated) afterDebit(deps.ctx, updated, fee);
    if (i === 0) callerFee = fee;
  }
  return { ok: true, reason: null, fee: callerFee, duplicate: false };
}
