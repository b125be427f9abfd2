/**
 * The agent's operations as jobs on the `transactions` queue. `deadline` (epoch ms) is when the agent
 * stops waiting (deadline.ts): a worker drops a job found past it unstarted, so an operation answered
 * as timed out never takes effect later.
 */

export interface CallParty {
  transaction_tag: string;
  account_tag: string;
}

/** What is known of a call when it starts (beginTransaction's input, validated). */
export interface CallStart extends CallParty {
  source: string;
  destination: string;
  source_ip: string | null;
  carrier_ip: string | null;
  tags: string[] | null;
  destination_account_tag: string | null;
  timestamp_auth: string | null;
  timestamp_begin: string;
}

/** A finished call, as recordTransaction and imports receive it. */
export interface FinishedCall extends CallStart {
  timestamp_end: string;
}

export interface BeginJob extends CallStart {
  op: 'begin';
  deadline: number;
}

export interface EndJob extends CallParty {
  op: 'end';
  timestamp_end: string;
  deadline: number;
}

export interface RecordJob extends FinishedCall {
  op: 'record';
  deadline: number;
}

export interface RollbackJob extends CallParty {
  op: 'rollback';
  deadline: number;
}

export interface AuthorizationJob {
  op: 'authorization';
  transaction_tag: string | null;
  account_tag: string;
  destination_account_tag: string | null;
  source: string | null;
  destination: string;
  deadline: number;
}

/** A job that does nothing: the benchmark's bare queue round trip (bench/agent.ts). */
export interface NoopJob {
  op: 'noop';
  deadline: number;
}

/** `reply_to`: the inbox of the agent waiting for the answer (src/shared/infra/replies.ts). */
export type TransactionJob = (BeginJob | EndJob | RecordJob | RollbackJob | AuthorizationJob | NoopJob) & { reply_to?: string };
