import { randomUUID } from 'node:crypto';
import type { AppContext } from '../shared/context';
import type { AuthorizationResult, OperationResult, TransactionJob } from '../shared/queues/payloads';
import { decideAbandonedWithin } from '../shared/outcomes';
import { ReplyTimeout, request, type ReplyInbox } from '../shared/queues/replies';
import { authorizationAnswer, operationAnswer, type AuthorizationAnswer, type OperationAnswer } from './answers';
import type { Input } from '../shared/validation/fields';
import { validate, type OperationName } from '../shared/validation/operations';

export type { Input } from '../shared/validation/fields';
export { validate, type OperationName } from '../shared/validation/operations';

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
    private readonly inbox: ReplyInbox,
  ) {}

  private async submit<R>(job: TransactionJob, answers: { timedOut: R; unavailable: R }, decided?: (jobId: string) => Promise<R | null>): Promise<R> {
    const jobId = randomUUID();
    let failure: 'timeout' | 'unavailable';
    try {
      return await request<TransactionJob, R>(this.ctx.queues.transactions, this.inbox, job.op, job, jobId, job.deadline - Date.now());
    } catch (err) {
      failure = err instanceof ReplyTimeout ? 'timeout' : 'unavailable';
      if (failure === 'unavailable') this.ctx.logger.warn({ err, jobId, op: job.op }, 'agent operation failed: answered UNAVAILABLE');
    }
    // The completion may have come just after the wait ended, or its reply was lost: the job's answer in
    // Redis is the truth.
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

  async run(op: OperationName, input: Input): Promise<OperationAnswer> {
    const now = new Date();
    const job = validate[op](input, now, now.getTime() + this.ctx.config.agentTimeoutMs);
    const result = await this.submit<OperationResult>(job, { timedOut: { ok: false, reason: 'TIMEOUT' }, unavailable: { ok: false, reason: 'UNAVAILABLE' } }, (jobId) =>
      this.abandon(job, jobId),
    );
    return operationAnswer(job, result);
  }

  async authorization(input: Input): Promise<AuthorizationAnswer> {
    const now = new Date();
    const job = validate.authorization(input, now, now.getTime() + this.ctx.config.agentTimeoutMs);
    const refused = (reason: string): AuthorizationResult => ({ authorized: false, unauthorized_reason: reason, max_available_units: 0, balance: null, carriers: [], unauthorized_account_tag: null });
    return authorizationAnswer(job, await this.submit<AuthorizationResult>(job, { timedOut: refused('TIMEOUT'), unavailable: refused('UNAVAILABLE') }));
  }
}
