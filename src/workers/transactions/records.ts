import { randomUUID } from 'node:crypto';
import type { RateSnapshot, TransactionDoc } from '../../shared/domain/types';
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
