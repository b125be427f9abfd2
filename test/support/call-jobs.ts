import type { AuthorizationJob, BeginJob, EndJob, RecordJob, RollbackJob } from '../../src/shared/domain/calls';

/**
 * The agent jobs of one call, as the worker receives them, for tests that run the worker's functions in
 * their own process (test/integration/ledger). Calls start at `t0` (epoch ms) to destination 391234;
 * a job's deadline defaults to 10 s from when it is built.
 */
export function callJobs(t0: number, destination = '391234') {
  const at = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();
  const soon = () => Date.now() + 10_000;
  const call = (tag: string, accountTag: string) => ({
    transaction_tag: tag,
    account_tag: accountTag,
    source: '1',
    destination,
    source_ip: null,
    carrier_ip: null,
    tags: null,
    destination_account_tag: null,
    timestamp_auth: null,
    timestamp_begin: at(0),
  });
  return {
    at,
    begin: (tag: string, accountTag: string, deadline = soon()): BeginJob => ({ op: 'begin', ...call(tag, accountTag), deadline }),
    end: (tag: string, accountTag: string, seconds: number, deadline = soon()): EndJob => ({
      op: 'end',
      transaction_tag: tag,
      account_tag: accountTag,
      timestamp_end: at(seconds),
      deadline,
    }),
    record: (tag: string, accountTag: string, seconds: number, deadline = soon()): RecordJob => ({
      op: 'record',
      ...call(tag, accountTag),
      timestamp_end: at(seconds),
      deadline,
    }),
    rollback: (tag: string, accountTag: string, deadline = soon()): RollbackJob => ({
      op: 'rollback',
      transaction_tag: tag,
      account_tag: accountTag,
      deadline,
    }),
    authorization: (tag: string | null, accountTag: string, deadline = soon()): AuthorizationJob => ({
      op: 'authorization',
      account_tag: accountTag,
      destination,
      source: '1',
      transaction_tag: tag,
      destination_account_tag: null,
      deadline,
    }),
  };
}
