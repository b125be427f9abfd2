import type { Job } from 'bullmq';
import type { ProcessingJob } from '../../shared/domain/queues/payloads';
import {
  beforeDeadline,
  done,
  notAuthorized,
  type OperationResult,
  Reasons,
  refused,
  type TransactionJob,
} from '../../shared/domain/calls';
import { authorize } from './authorization';
import { abandonUnlessDecided } from '../../shared/domain/calls/decisions';
import { decideRefusal } from './decide';
import { begin, takeBackBegin } from './begin';
import { TransactionDeps } from './deps';
import { end, takeBackEnd } from './end';
import { processEndedCall } from './processing';
import { record, takeBackRecord } from './record';
import { rollback } from './rollback';
import { publishReply } from '../../shared/infra/replies';

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
      return data.op === 'authorization' ? notAuthorized(Reasons.TIMEOUT) : refused(Reasons.TIMEOUT);
    }
    // Every answer is decided before it is published; an accepted one by the operation itself.
    const decided = (call: { op: string; account_tag: string; transaction_tag: string }, result: OperationResult) =>
      decideRefusal(
        deps,
        { jobId: ref.id, op: call.op, account_tag: call.account_tag, transaction_tag: call.transaction_tag },
        data.deadline,
        result,
      );
    switch (data.op) {
      case 'begin':
        return decided(
          data,
          await begin(deps, data, ref).catch((err: unknown) =>
            failed(deps, data, ref.id, err, () =>
              takeBackBegin(deps, data.account_tag, data.transaction_tag, ref.id, { state: 'abandoned' }),
            ),
          ),
        );
      case 'end':
        return decided(
          data,
          await end(deps, data, ref).catch((err: unknown) =>
            failed(deps, data, ref.id, err, () => takeBackEnd(deps, data.account_tag, data.transaction_tag, ref.id)),
          ),
        );
      case 'record': {
        const result = await record(deps, data, ref).catch((err: unknown) =>
          failed(deps, data, ref.id, err, () => takeBackRecord(deps, data.account_tag, data.transaction_tag, ref.id)),
        );
        return decided(data, result.ok ? done() : refused(result.reason!));
      }
      case 'rollback':
        return decided(data, await rollback(deps, data, ref));
      case 'authorization':
        return authorize(deps, data);
      case 'noop':
        return done();
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

/**
 * A begin, end or record that threw midway (issue 31, defect 5): the operation is recorded abandoned and
 * what it made is taken back at once, and the agent hears UNAVAILABLE now instead of TIMEOUT after its
 * full wait (docs/AGENT.md: nothing happened, nothing will). Decided 'done' already, its answer stands.
 * If MongoDB cannot take even that, the error goes on: the agent records the abandonment when its wait
 * ends (or says the outcome is unknown), and the recovery sweep takes the changes back.
 */
async function failed(
  deps: TransactionDeps,
  job: { op: string; account_tag: string; transaction_tag: string },
  jobId: string,
  err: unknown,
  takeBack: () => Promise<unknown>,
): Promise<OperationResult> {
  try {
    const decision = await abandonUnlessDecided(deps.ctx.mongo.collections.outcomes, {
      jobId,
      op: job.op,
      account_tag: job.account_tag,
      transaction_tag: job.transaction_tag,
    });
    if (decision.state === 'done') return decision.result ?? done();
    await takeBack();
  } catch (second) {
    deps.ctx.logger.error({ err: second, jobId, op: job.op }, 'failed operation could not be taken back now; the recovery sweep will');
    throw err;
  }
  deps.ctx.logger.error(
    { err, jobId, op: job.op, transaction_tag: job.transaction_tag },
    'operation failed: recorded abandoned, its changes taken back, answered UNAVAILABLE',
  );
  return refused(Reasons.UNAVAILABLE);
}
