import type { BadInputReason, CallParty, FinishedCall, Reason } from '../calls';
import type { RateSnapshot } from '../types';

/**
 * Typed job payloads of every queue but `transactions`, whose jobs are the agent operations of the
 * call contract (src/shared/domain/calls/jobs.ts). Dates travel as ISO strings (JSON); money as decimal
 * strings (bigint is not JSON).
 */

/** An ended call of one account, to be rated, recorded and debited. */
export interface ProcessingJob extends CallParty {
  /** The running entry (RunningTransaction.id). */
  entry_id: string;
  enqueued_at: string;
  /**
   * The entry as the end that queued this job left it (issue 36: processing charges without reading the
   * account first). Absent when the job was queued again by the maintenance pass: the worker then reads
   * the entry from the account, as it also does when the account no longer holds this very entry ended
   * by this end (src/workers/transactions/processing.ts).
   */
  ended?: EndedEntry;
}

/** What processing rates and records of an ended running entry (RunningTransaction, dates as ISO strings). */
export interface EndedEntry {
  transaction_tag: string;
  origin_account_tag: string;
  source: string;
  source_ip: string | null;
  destination: string;
  carrier_ip: string;
  tags: string[] | null;
  inbound: boolean;
  rate: RateSnapshot | null;
  call_parties: string[] | null;
  timestamp_auth: string | null;
  timestamp_begin: string;
  timestamp_end: string;
  end_job: string;
  /** Absent in jobs queued by older versions. */
  begin_job?: string | null;
}

export type AlertKind = 'LOW_BALANCE' | 'NEGATIVE_BALANCE' | 'SPEND_LIMIT' | 'CALL_REFUSED' | 'LONG_RUNNING_CALL' | 'END_CALL';

export type AlertChannel = 'email' | 'sms' | 'webhook';

/**
 * One alert, delivered on every configured channel that has a recipient: e-mail to `email`, SMS to
 * `mobile`, the webhook always. `email`/`mobile` are copied from the account when the alert is
 * raised, so a later account change does not redirect an alert already queued.
 */
export interface AlertJob {
  kind: AlertKind;
  account_tag: string;
  transaction_tag: string | null;
  message: string;
  email: string | null;
  mobile: string | null;
  details: Record<string, string | number | boolean | null>;
  /** When the condition was observed (ISO). */
  at: string;
  /** Channels already delivered, written back by the worker so a retry does not resend them. */
  delivered?: AlertChannel[];
}

export interface MaintenanceJob {
  task: 'scan-long-calls' | 'scan-exhausted-calls' | 'audit-ledger';
}

/**
 * One finished call of a batch (a CDR line, or an item of recordTransactions), already validated like
 * recordTransaction. `line` numbers the call within its source (file line, or index of the request).
 */
export interface ImportLine extends FinishedCall {
  line: number;
}

/**
 * A batch of calls to record. `import_id` + `batch` name it: the same pair always means the same
 * calls, so the pair is the job id, the debit marker and the owner of the records it writes.
 */
export interface ImportBatchJob {
  import_id: string;
  batch: number;
  lines: ImportLine[];
  /** Epoch ms after which the batch must not start (the agent stopped waiting); null for file imports. */
  deadline: number | null;
}

/**
 * A settlement of file import batches (src/shared/domain/ledger/settlements.ts): debits, per account, the
 * totals of those of `batches` that no other settlement took. `settlement_id` is unique and is the job id.
 */
export interface ImportSettlementJob {
  import_id: string;
  settlement_id: string;
  batches: string[];
}

/** One batch of a rerating run (docs/RERATING.md): the run's records after its cursor. Job id `rerate/<run>/<batch>`. */
export interface RerateBatchJob {
  rerating_id: string;
  batch: number;
}

/**
 * What the `imports` queue carries: batches ('import-batch') and their settlements ('import-settle'), and
 * the batches of rerating runs ('rerate-batch'): all bulk work on records.
 */
export type ImportJob = ImportBatchJob | ImportSettlementJob | RerateBatchJob;

export const isSettlementJob = (job: ImportJob): job is ImportSettlementJob => 'settlement_id' in job;

export const isRerateJob = (job: ImportJob): job is RerateBatchJob => 'rerating_id' in job;

export interface ImportRefusal {
  line: number;
  /** NOT_FOUND, NOT_ACTIVE, UNREACHABLE_DESTINATION or TIMEOUT, or bad input. */
  reason: Reason | BadInputReason;
  /** The account the refusal is about (the caller, a linked account or the receiver). */
  account_tag?: string;
}

/** What a batch did; money as decimal strings. */
export interface ImportBatchResult {
  batch_id: string;
  lines: number;
  /** Calls recorded and charged by this batch. */
  rated: number;
  /** Lines whose call was already recorded (earlier import, recordTransaction, or an earlier line). */
  duplicate_lines: number[];
  refused: ImportRefusal[];
  /** Total debited from the calling accounts. */
  charged: string;
  /** Total debited from linked (parent) accounts. */
  charged_linked: string;
  /** True when an earlier run had already finished this batch: nothing was done now. */
  replayed: boolean;
  /**
   * With `replayed`: the creation time of the job that finished the batch. The importer that sent that
   * job too (it sent the batch again when Redis lost the first) counts the batch as its own.
   */
  finished_by_job?: number;
}
