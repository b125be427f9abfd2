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
import { parseDateTime } from '../shared/validation/datetime';

/** Longest tag, address or number we accept; longer input is a client bug, not a call. */
const MAX_TEXT = 256;
const MAX_TAGS = 50;

export type Input = Record<string, unknown>;

function text(input: Input, field: string, required: true): string;
function text(input: Input, field: string, required: boolean): string | null;
function text(input: Input, field: string, required: boolean): string | null {
  const value = input[field];
  if (value === undefined || value === null) {
    if (required) throw badInput(field, 'is required');
    return null;
  }
  if (typeof value !== 'string') throw badInput(field, 'must be a string');
  if (value.trim() === '') {
    if (required) throw badInput(field, 'must not be empty');
    return null;
  }
  if (value.length > MAX_TEXT) throw badInput(field, `must be at most ${MAX_TEXT} characters`);
  return value;
}

function timestamp(input: Input, field: string, fallback: Date | null): Date {
  const raw = text(input, field, fallback === null);
  if (raw === null) return fallback!;
  const parsed = parseDateTime(raw);
  if (!parsed) throw badInput(field, 'must be a datetime like 2026-01-31T12:00:00 or 2026-01-31T12:00:00Z');
  return parsed;
}

function tagList(input: Input, field: string): string[] | null {
  const value = input[field];
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.some((t) => typeof t !== 'string' || t.length > MAX_TEXT)) {
    throw badInput(field, `must be a list of strings of at most ${MAX_TEXT} characters`);
  }
  if (value.length > MAX_TAGS) throw badInput(field, `must hold at most ${MAX_TAGS} tags`);
  return value as string[];
}

/** Field checks shared by begin and record (both describe a call). */
function callFields(input: Input) {
  return {
    transaction_tag: text(input, 'transaction_tag', true),
    account_tag: text(input, 'account_tag', true),
    source: text(input, 'source', true),
    destination: text(input, 'destination', true),
    source_ip: text(input, 'source_ip', false),
    carrier_ip: text(input, 'carrier_ip', false),
    tags: tagList(input, 'tags'),
    destination_account_tag: text(input, 'destination_account_tag', false),
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
      transaction_tag: text(input, 'transaction_tag', true),
      account_tag: text(input, 'account_tag', true),
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
      transaction_tag: text(input, 'transaction_tag', true),
      account_tag: text(input, 'account_tag', true),
      deadline,
    };
  },
  authorization(input: Input, _now: Date, deadline: number): AuthorizationJob {
    return {
      op: 'authorization',
      transaction_tag: text(input, 'transaction_tag', false),
      account_tag: text(input, 'account_tag', true),
      destination_account_tag: text(input, 'destination_account_tag', false),
      source: text(input, 'source', false),
      destination: text(input, 'destination', true),
      deadline,
    };
  },
};

export type OperationName = Exclude<keyof typeof validate, 'authorization'>;

/**
 * The agent's only job: validate, enqueue, and wait (bounded by AGENT_TIMEOUT_MS) for the worker's
 * answer. Workers drop a job found past its deadline, so a TIMEOUT answer never takes effect later.
 */
export class AgentOperations {
  constructor(
    private readonly ctx: AppContext,
    private readonly events: QueueEvents,
  ) {}

  private async submit<R>(job: TransactionJob, timedOut: R): Promise<R> {
    const added = await this.ctx.queues.transactions.add(job.op, job, { jobId: randomUUID() });
    try {
      return (await added.waitUntilFinished(this.events, job.deadline - Date.now())) as R;
    } catch (err) {
      const message = (err as Error).message ?? '';
      if (/timed out/i.test(message)) return timedOut;
      this.ctx.logger.error({ err, jobId: added.id, op: job.op }, 'agent operation failed in the worker');
      throw err;
    }
  }

  async run(op: OperationName, input: Input): Promise<OperationResult> {
    const now = new Date();
    const job = validate[op](input, now, now.getTime() + this.ctx.config.agentTimeoutMs);
    return this.submit<OperationResult>(job, { ok: false, reason: 'TIMEOUT' });
  }

  async authorization(input: Input): Promise<AuthorizationResult> {
    const now = new Date();
    const job = validate.authorization(input, now, now.getTime() + this.ctx.config.agentTimeoutMs);
    return this.submit<AuthorizationResult>(job, {
      authorized: false,
      unauthorized_reason: 'TIMEOUT',
      max_available_units: 0,
      balance: null,
      carriers: [],
    });
  }
}
