import type { ImportLine } from '../queues/payloads';
// The agent's field tables and validate.record are pure functions (no agent runtime). They stay in
// src/agent for now; moving validation.ts, fields.ts and timestamp.ts to src/shared/domain/validation would
// remove this one dependency of shared code on a front end.
import type { Input } from '../validation/fields';
import { validate } from '../calls/operations';

export type { Input } from '../validation/fields';

/**
 * Validates one call exactly as recordTransaction does (validate.record) and turns it into a batch
 * line. Throws the same BAD_USER_INPUT error naming the field. Shared by recordTransactions (agent),
 * the CDR import CLI and uploads through the management API.
 */
export function validateRecordLine(input: Input, line: number, now: Date): ImportLine {
  const job = validate.record(input, now, 0);
  return {
    line,
    transaction_tag: job.transaction_tag,
    account_tag: job.account_tag,
    source: job.source,
    destination: job.destination,
    source_ip: job.source_ip,
    carrier_ip: job.carrier_ip,
    tags: job.tags,
    destination_account_tag: job.destination_account_tag,
    timestamp_auth: job.timestamp_auth,
    timestamp_begin: job.timestamp_begin,
    timestamp_end: job.timestamp_end,
  };
}
