import { randomUUID } from 'node:crypto';
import type { RateSnapshot, RunningTransaction, TransactionDoc } from '../../shared/domain/types';
import { callDurationSeconds, callFee } from '../../shared/domain/rating';

export interface CallFacts {
  /** The record's `_id`; a random one when absent. */
  id?: string;
  transaction_tag: string;
  account_tag: string;
  origin_account_tag: string;
  source: string | null;
  source_ip: string | null;
  destination: string | null;
  carrier_ip: string | null;
  tags: string[] | null;
  authorized: boolean | null;
  timestamp_auth: Date | null;
  timestamp_begin: Date;
  timestamp_end: Date;
  inbound: boolean;
  rate: RateSnapshot | null;
  call_parties: string[];
  charged_by?: TransactionDoc['charged_by'];
  /** The jobs that began and ended the running entry charged (processing only). */
  begin_job?: string | null;
  end_job?: string | null;
}

/** The consolidated, self-contained record of a rated call (state 'pending' until charged). */
export function ratedRecord(call: CallFacts): TransactionDoc {
  const duration = callDurationSeconds(call.timestamp_begin, call.timestamp_end);
  const { fee, segments } = callFee(call.rate, call.timestamp_begin, duration);
  return {
    _id: call.id ?? randomUUID(),
    transaction_tag: call.transaction_tag,
    account_tag: call.account_tag,
    origin_account_tag: call.origin_account_tag,
    source: call.source,
    source_ip: call.source_ip,
    destination: call.destination,
    carrier_ip: call.carrier_ip,
    tags: call.tags,
    authorized: call.authorized,
    unauthorized_reason: null,
    destination_rate: call.rate,
    timestamp_auth: call.timestamp_auth,
    timestamp_begin: call.timestamp_begin,
    timestamp_end: call.timestamp_end,
    inbound: call.inbound,
    failed: false,
    duration,
    fee,
    ...(segments ? { segments } : {}),
    state: 'pending',
    call_parties: call.call_parties,
    ...(call.charged_by ? { charged_by: call.charged_by } : {}),
    ...(call.begin_job ? { begin_job: call.begin_job } : {}),
    ...(call.end_job ? { end_job: call.end_job } : {}),
  };
}

/**
 * The record of one party's ended running entry (processing's, or an end's that charges in its own
 * write): its `_id` is the entry's unique id, so every attempt writes the same record and the charge's
 * ledger id (`charge:<_id>`) names this call only.
 */
export function recordOfEntry(accountTag: string, entry: RunningTransaction): TransactionDoc {
  return ratedRecord({
    id: entry.id,
    transaction_tag: entry.transaction_tag,
    account_tag: accountTag,
    origin_account_tag: entry.origin_account_tag,
    source: entry.source,
    source_ip: entry.source_ip ?? null,
    destination: entry.destination,
    carrier_ip: entry.carrier_ip || null,
    tags: entry.tags ?? null,
    authorized: true,
    timestamp_auth: entry.timestamp_auth ?? null,
    timestamp_begin: entry.timestamp_begin,
    timestamp_end: entry.timestamp_end!,
    inbound: entry.inbound,
    rate: entry.rate,
    call_parties: entry.call_parties ?? [accountTag],
    charged_by: 'processing',
    begin_job: entry.begin_job ?? null,
    end_job: entry.end_job ?? null,
  });
}
