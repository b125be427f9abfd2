import { randomUUID } from 'node:crypto';
import type { AppContext } from '../shared/domain/context';
import {
  type AuthorizationResult,
  decideAbandonedWithin,
  notAuthorized,
  type OperationResult,
  Reasons,
  refused,
  type TransactionJob,
} from '../shared/domain/calls';
import { ReplyTimeout, request, type ReplyInbox } from '../shared/infra/replies';
import { authorizationAnswer, operationAnswer, type AuthorizationAnswer, type OperationAnswer } from './answers';
import type { Input } from '../shared/domain/validation/fields';
import { validate, type OperationName } from '../shared/domain/calls/operations';

export type { Input } from '../shared/domain/validation/fields';
export { validate, type OperationName } from '../shared/domain/calls/operations';

/**
 * How long the agent, its wait over, may spend learning or recording an operation's fate
 * (AGENT_ABANDON_MS): every answer comes within AGENT_TIMEOUT_MS plus this (docs/AGENT.md, "When an
 * answer comes"), so a proxy's own HTTP timeout above the sum always hears an answer. A MongoDB restart
 * longer than this is answered OUTCOME_UNKNOWN rather than waited out.
 */
export function abandonWriteMs(config: { agentAbandonMs: number }): number {
  return config.agentAbandonMs;
}

/** What `promise` gives before `until` (epoch ms), else `fallback`; its error is `fallback` too. */
function before<T, F>(promise: Promise<T>, until: number, fallback: F): Promise<T | F> {
  return new Promise<T | F>((resolve) => {
    const timer = setTimeout(() => resolve(fallback), Math.max(0, until - Date.now()));
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}

/** The most the first look at the job's answer in Redis may take, out of the abandonment's bound. */
const FIRST_LOOK_MS = 100;

/** Time kept, out of the abandonment's bound, for the last look at the job's answer in Redis. */
const LAST_LOOK_MS = 100;

/**
 * The agent's only job: validate, enqueue, and wait (bounded by AGENT_TIMEOUT_MS) for the worker's
 * answer. When it stops waiting (the deadline, a failed job, Redis unreachable), it records the
 * operation abandoned (src/shared/domain/calls/decisions.ts) before answering TIMEOUT or UNAVAILABLE: a worker that
 * made the changes then takes them back, so the answer is true. If a worker decided 'done' first, its
 * answer is given instead. If the abandonment cannot be recorded within AGENT_ABANDON_MS, nobody can
 * say what happened: OUTCOME_UNKNOWN, and the same request sent again answers it (issue 37).
 * Authorization only reads: it is never recorded.
 */
export class AgentOperations {
  constructor(
    private readonly ctx: AppContext,
    private readonly inbox: ReplyInbox,
  ) {}

  private async submit<R>(
    job: TransactionJob,
    answers: { timedOut: R; unavailable: R; unknown: R },
    decided?: (jobId: string, ms: number) => Promise<R | null>,
  ): Promise<R> {
    const jobId = randomUUID();
    let failure: 'timeout' | 'unavailable';
    try {
      return await request<TransactionJob, R>(this.ctx.queues.transactions, this.inbox, job.op, job, jobId, job.deadline - Date.now());
    } catch (err) {
      failure = err instanceof ReplyTimeout ? 'timeout' : 'unavailable';
      if (failure === 'unavailable') this.ctx.logger.warn({ err, jobId, op: job.op }, 'agent operation failed: recording it abandoned');
    }
    const until = Date.now() + this.ctx.config.agentAbandonMs;
    // The answer may have come just after the wait ended, or its reply was lost: the answer the worker
    // stored beside it is the truth (call-queue.ts). Bounded: a Redis that does not answer must not hold
    // the answer back.
    const finishedAnswer = (by: number) => before(this.ctx.queues.transactions.answer<R>(jobId), by, null);
    // A healthy Redis answers the look at once; an unreachable one must not use up the time the
    // abandonment's write to MongoDB needs (it would answer OUTCOME_UNKNOWN with MongoDB reachable).
    const finished = await finishedAnswer(Math.min(until - LAST_LOOK_MS, Date.now() + FIRST_LOOK_MS));
    if (finished) return finished;
    if (!decided) return failure === 'timeout' ? answers.timedOut : answers.unavailable;
    let unrecorded = false;
    const answer = await decided(jobId, Math.max(0, until - LAST_LOOK_MS - Date.now())).catch((err: unknown) => {
      this.ctx.logger.error(
        { err, jobId, op: job.op },
        'could not record the operation abandoned: answered OUTCOME_UNKNOWN; the worker or the recovery sweep settles it',
      );
      unrecorded = true;
      return null;
    });
    if (answer) return answer;
    if (!unrecorded) return failure === 'timeout' ? answers.timedOut : answers.unavailable;
    // Unrecorded: a last look for the worker's answer before saying the outcome is unknown.
    return (await finishedAnswer(until)) ?? answers.unknown;
  }

  /** Records the operation abandoned; returns the worker's answer if it had decided 'done' first. */
  private async abandon(
    job: TransactionJob & { account_tag: string; transaction_tag: string | null },
    jobId: string,
    ms: number,
  ): Promise<OperationResult | null> {
    const ref = { jobId, op: job.op, account_tag: job.account_tag, transaction_tag: job.transaction_tag ?? '' };
    const decision = await decideAbandonedWithin(this.ctx.mongo.collections, ref, ms);
    return !decision.won && decision.doc.state === 'done' ? decision.doc.result : null;
  }

  async run(op: OperationName, input: Input): Promise<OperationAnswer> {
    const now = new Date();
    const job = validate[op](input, now, now.getTime() + this.ctx.config.agentTimeoutMs);
    const result = await this.submit<OperationResult>(
      job,
      { timedOut: refused(Reasons.TIMEOUT), unavailable: refused(Reasons.UNAVAILABLE), unknown: refused(Reasons.OUTCOME_UNKNOWN) },
      (jobId, ms) => this.abandon(job, jobId, ms),
    );
    return operationAnswer(job, result);
  }

  async authorization(input: Input): Promise<AuthorizationAnswer> {
    const now = new Date();
    const job = validate.authorization(input, now, now.getTime() + this.ctx.config.agentTimeoutMs);
    // Authorization is never recorded: an unknown outcome is UNAVAILABLE (a late worker releases what it reserved).
    const engine = {
      timedOut: notAuthorized(Reasons.TIMEOUT),
      unavailable: notAuthorized(Reasons.UNAVAILABLE),
      unknown: notAuthorized(Reasons.UNAVAILABLE),
    };
    return authorizationAnswer(job, await this.submit<AuthorizationResult>(job, engine));
  }
}
