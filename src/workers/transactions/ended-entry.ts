import { callId, type RunningTransaction } from '../../shared/domain/types';
import type { EndedEntry, ProcessingJob } from '../../shared/domain/queues/payloads';

/**
 * An ended entry as it travels in its processing job (issue 36): what the end's own update returned,
 * so processing charges it without reading the account first. None for an entry not ended by a job.
 */
export function endedEntryOf(entry: RunningTransaction): EndedEntry | undefined {
  if (entry.in_progress || !entry.timestamp_end || !entry.end_job) return undefined;
  return {
    transaction_tag: entry.transaction_tag,
    origin_account_tag: entry.origin_account_tag,
    source: entry.source,
    source_ip: entry.source_ip ?? null,
    destination: entry.destination,
    carrier_ip: entry.carrier_ip,
    tags: entry.tags ?? null,
    inbound: entry.inbound,
    rate: entry.rate,
    call_parties: entry.call_parties ?? null,
    timestamp_auth: entry.timestamp_auth ? entry.timestamp_auth.toISOString() : null,
    timestamp_begin: entry.timestamp_begin.toISOString(),
    timestamp_end: entry.timestamp_end.toISOString(),
    end_job: entry.end_job,
    begin_job: entry.begin_job ?? null,
  };
}

/** The running entry a processing job carries, as processing reads it from an account. */
export function carriedEntry(job: ProcessingJob & { ended: EndedEntry }): RunningTransaction {
  const e = job.ended;
  return {
    id: job.entry_id,
    transaction_tag: e.transaction_tag,
    origin_account_tag: e.origin_account_tag,
    call_id: callId(e.origin_account_tag, e.transaction_tag),
    source: e.source,
    source_ip: e.source_ip,
    destination: e.destination,
    carrier_ip: e.carrier_ip,
    tags: e.tags,
    inbound: e.inbound,
    rate: e.rate,
    call_parties: e.call_parties ?? undefined,
    in_progress: false,
    timestamp_auth: e.timestamp_auth ? new Date(e.timestamp_auth) : null,
    timestamp_begin: new Date(e.timestamp_begin),
    timestamp_end: new Date(e.timestamp_end),
    end_job: e.end_job,
    begin_job: e.begin_job ?? null,
  };
}
