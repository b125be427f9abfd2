import type { QueueEvents } from 'bullmq';
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../shared/context';
import { badInput } from '../shared/errors';
import type {
  AuthorizationJob,
  AuthorizationResult,
  BeginJob,
  EndJob,
  OperationResult,
  RecordJob,
  RollbackJob,
  TransactionJob,
} from '../shared/queues/payloads';
import { decideAbandonedWithin } from '../shared/outcomes';
import { parseDateTime } from '../shared/validation/datetime';
import { address, number, tag, tagList, type Parse } from '../shared/validation/text';

export type Input = Record<string, unknown>;

/**
 * One agent field checked by its kind (src/shared/validation/text.ts, the same rules as the API's).
 * Absent is undefined or null, and for an optional field also '' (SIP proxies send an unset variable
 * as an empty string); anything else must pass the kind's rule.
 */
function field<T>(input: Input, name: string, parse: Parse<T>, required: true): T;
function field<T>(input: Input, name: string, parse: Parse<T>, required: boolean): T | null;
function field<T>(input: Input, name: string, parse: Parse<T>, required: boolean): T | null {
  const value = input[name];
  if (value === undefined || value === null || (value === '' && !required)) {
    if (required) throw badInput(name, 'is required');
    return null;
  }
  return parse(name, value);
}

/** Longer than any datetime: refused before parsing. */
const MAX_TIMESTAMP = 64;

const timestampText: Parse<string> = (name, value) => {
  if (typeof value !== 'string') throw badInput(name, 'must be a string');
  if (value.length > MAX_TIMESTAMP) throw badInput(name, `must be at most ${MAX_TIMESTAMP} characters`);
  return value;
};

function timestamp(input: Input, name: string, fallback: Date | null): Date {
  const raw = field(input, name, timestampText, fallback === null);
  if (raw === null) return fallback!;
  const parsed = parseDateTime(raw);
  if (!parsed) throw badInput(name, 'must be a datetime like 2026-01-31T12:00:00 or 2026-01-31T12:00:00Z');
  return parsed;
}

/** Field checks shared by begin and record (both describe a call). */
function callFields(input: Input) {
  return {
    transaction_tag: field(input, 'transaction_tag', tag, true),
    account_tag: field(input, 'account_tag', tag, true),
    source: field(input, 'source', number, true),
    destination: field(input, 'destination', number, true),
    source_ip: field(input, 'source_ip', address, false),
    carrier_ip: field(input, 'carrier_ip', address, false),
    tags: field(input, 'tags', tagList, false),
    destination_account_tag: field(input, 'destination_account_tag', tag, false),
  };
}

/** Pure validation: turns client input into job payloads, or throws BAD_USER_INPUT naming the field. */
export const validate = {
  begin(input: Input, now: Date, deadline: number): BeginJob {
    const auth = input.timestamp_auth == null ? null : timestamp(input, 'timestamp_auth', now);
    return {
      op: 'begin',
      ...callFields(input),
      timestamp_auth: auth ? auth.toISOString() : null,
      timestamp_begin: timestamp(input, 'timestamp_begin', now).toISOString(),
      deadline,
    };
  },
  end(input: Input, now: Date, deadline: number): EndJob {
    return {
      op: 'end',
      transaction_tag: field(input, 'transaction_tag', tag, true),
      account_tag: field(input, 'account_tag', tag, true),
      timestamp_end: timestamp(input, 'timestamp_end', now).toISOString(),
      deadline,
    };
  },
  record(input: Input, now: Date, deadline: number): RecordJob {
    const begin = timestamp(input, 'timestamp_begin', null);
    const end = timestamp(input, 'timestamp_end', null);
    const auth = input.timestamp_auth == null ? null : timestamp(input, 'timestamp_auth', now);
    return {
      op: 'record',
      ...callFields(input),
      timestamp_auth: auth ? auth.toISOString() : null,
      timestamp_begin: begin.toISOString(),
      timestamp_end: end.toISOString(),
      deadline,
    };
  },
  rollback(input: Input, _now: Date, deadline: number): RollbackJob {
    return {
      op: 'rollback',
      transaction_tag: field(input, 'transaction_tag', tag, true),
      account_tag: field(input, 'account_tag', tag, true),
      deadline,
    };
  },
  authorization(input: Input, _now: Date, deadline: number): AuthorizationJob {
    return {
      op: 'authorization',
      transaction_tag: field(input, 'transaction_tag', tag, false),
      account_tag: field(input, 'account_tag', tag, true),
      destination_account_tag: field(input, 'destination_account_tag', tag, false),
      source: field(input, 'source', number, false),
      destination: field(input, 'destination', number, true),
      deadline,
    };
  },
};

export type OperationName = Exclude<keyof typeof validate, 'authorization'>;

/**
 * How long the agent tries to record an abandonment before answering UNAVAILABLE without it. Long
 * enough to ride out a MongoDB restart or fail-over (the driver's server selection waits 10 s): an
 * answer given without the record is the one case where a worker may have decided otherwise.
 */
export function abandonWriteMs(config: { agentTimeoutMs: number }): number {
  return Math.max(10_000, config.agentTimeoutMs);
}

/**
 * The agent's only job: validate, enqueue, and wait (bounded by AGENT_TIMEOUT_MS) for the worker's
 * answer. When it stops waiting (the deadline, a failed job, Redis unreachable), it records the
 * operation abandoned (src/shared/outcomes.ts) before answering TIMEOUT or UNAVAILABLE: a worker that
 * made the changes then takes them back, so the answer is true. If a worker decided 'done' first, its
 * answer is given instead. Authorization only reads: it is never recorded.
 */
export class AgentOperations {
  constructor(
    private readonly ctx: AppContext,
    private readonly events: QueueEvents,
  ) {}

  private async submit<R>(job: TransactionJob, answers: { timedOut: R; unavailable: R }, decided?: (jobId: string) => Promise<R | null>): Promise<R> {
    const jobId = randomUUID();
    let failure: 'timeout' | 'unavailable';
    try {
      const added = await this.ctx.queues.transactions.add(job.op, job, { jobId });
      return (await added.waitUntilFinished(this.events, job.deadline - Date.now())) as R;
    } catch (err) {
      failure = /timed out/i.test((err as Error).message ?? '') ? 'timeout' : 'unavailable';
      if (failure === 'unavailable') this.ctx.logger.warn({ err, jobId, op: job.op }, 'agent operation failed: answered UNAVAILABLE');
    }
    // The completion may have come just after the wait ended: the job's answer in Redis is the truth.
    const finishedAnswer = () =>
      this.ctx.queues.transactions
        .getJob(jobId)
        .then((job) => (job?.finishedOn && !job.failedReason ? (job.returnvalue as R | null) : null))
        .catch(() => null);
    const finished = await finishedAnswer();
    if (finished) return finished;
    // Without the abandonment recorded, TIMEOUT cannot be promised: the store is what is unreachable.
    let unrecorded = false;
    const answer = decided
      ? await decided(jobId).catch((err: unknown) => {
          this.ctx.logger.error({ err, jobId, op: job.op }, 'could not record the operation abandoned: answered UNAVAILABLE; the worker or the recovery sweep takes it back');
          unrecorded = true;
          return null;
        })
      : null;
    if (answer) return answer;
    // Unrecorded: a last look for the worker's answer before giving the one answer that may be untrue.
    return (unrecorded ? await finishedAnswer() : null) ?? (failure === 'timeout' && !unrecorded ? answers.timedOut : answers.unavailable);
  }

  /** Records the operation abandoned; returns the worker's answer if it had decided 'done' first. */
  private async abandon(job: TransactionJob & { account_tag: string; transaction_tag: string | null }, jobId: string): Promise<OperationResult | null> {
    const ref = { jobId, op: job.op, account_tag: job.account_tag, transaction_tag: job.transaction_tag ?? '' };
    const decision = await decideAbandonedWithin(this.ctx.mongo.collections.outcomes, ref, abandonWriteMs(this.ctx.config));
    return !decision.won && decision.doc.state === 'done' ? decision.doc.result : null;
  }

  async run(op: OperationName, input: Input): Promise<OperationResult> {
    const now = new Date();
    const job = validate[op](input, now, now.getTime() + this.ctx.config.agentTimeoutMs);
    return this.submit<OperationResult>(job, { timedOut: { ok: false, reason: 'TIMEOUT' }, unavailable: { ok: false, reason: 'UNAVAILABLE' } }, (jobId) =>
      this.abandon(job, jobId),
    );
  }

  async authorization(input: Input): Promise<AuthorizationResult> {
    const now = new Date();
    const job = validate.authorization(input, now, now.getTime() + this.ctx.config.agentTimeoutMs);
    const refused = (reason: string): AuthorizationResult => ({ authorized: false, unauthorized_reason: reason, max_available_units: 0, balance: null, carriers: [], unauthorized_account_tag: null });
    return this.submit<AuthorizationResult>(job, { timedOut: refused('TIMEOUT'), unavailable: refused('UNAVAILABLE') });
  }
}
