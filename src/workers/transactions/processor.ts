import type { Job } from 'bullmq';
import type { ProcessingJob, TransactionJob } from '../../shared/queues/payloads';
import { authorize } from './authorization';
import { begin } from './begin';
import { beforeDeadline, Reasons, TransactionDeps } from './deps';
import { end } from './end';
import { processEndedCall } from './processing';
import { record } from './record';
import { rollback } from './rollback';
import { publishReply } from '../../shared/queues/replies';

/** The `transactions` queue: real-time agent operations, answered through the job's return value. */
export function transactionProcessor(deps: TransactionDeps) {
  const run = operationRunner(deps);
  const { ctx } = deps;
  return async (job: Job<TransactionJob>) => {
    const result = await run(job);
    // The waiting agent hears at once; a lost reply costs it a wait, never a wrong answer (replies.ts).
    if (job.data.reply_to) {
      await publishReply(ctx.redis, ctx.config.queuePrefix, job.data.reply_to, job.id!, result).catch((err: unknown) =>
        ctx.logger.warn({ err, jobId: job.id }, 'reply not published; the agent reads the job instead'),
      );
    }
    return result;
  };
}

function operationRunner(deps: TransactionDeps) {
  return async (job: Job<TransactionJob>) => {
    const data = job.data;
    // Only a job that has not started may be dropped unseen: a re-run after a crash finishes or undoes
    // what its first run did (decide.ts), even past the deadline.
    const firstStart = (job.attemptsStarted ?? 1) <= 1;
    const ref = { id: job.id!, deadline: data.deadline, rerun: !firstStart };
    if (firstStart && !beforeDeadline(data.deadline)) {
      deps.ctx.logger.warn({ jobId: job.id, op: data.op }, 'dropped: past its deadline');
      return data.op === 'authorization'
        ? { authorized: false, unauthorized_reason: Reasons.TIMEOUT, max_available_units: 0, balance: null, carriers: [], unauthorized_account_tag: null }
        : { ok: false, reason: Reasons.TIMEOUT };
    }
    switch (data.op) {
      case 'begin':
        return begin(deps, data, ref);
      case 'end':
        return end(deps, data, ref);
      case 'record': {
        const result = await record(deps, data, ref);
        return { ok: result.ok, reason: result.reason };
      }
      case 'rollback':
        return rollback(deps, data, ref);
      case 'authorization':
        return authorize(deps, data);
      case 'noop':
        return { ok: true, reason: null };
    }
  };
}

/** The `processing` queue: ended calls to rate, record and debit. */
export function processingProcessor(deps: TransactionDeps) {
  return async (job: Job<ProcessingJob>) => {
    const result = await processEndedCall(deps, job.data);
    if (result.outcome === 'not-ended') throw new Error('entry is not ended yet');
    return { outcome: result.outcome, fee: result.fee.toString() };
  };
}
