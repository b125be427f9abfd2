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
import { decideRefusal, fencedAnswer } from './decide';
import { begin, takeBackBegin } from './begin';
import { processingDeps, TransactionDeps } from './deps';
import { endCall, type EndOutcome, queueProcessing, takeBackEnd } from './end';
import { processEndedCall } from './processing';
import { record, takeBackRecord } from './record';
import { rollback } from './rollback';
import type { CallJob } from '../../shared/infra/call-queue';

/** A call job's answer, and what the job does after the agent has it (an end's charges). */
export interface CallOutcome {
  result: Awaited<ReturnType<ReturnType<typeof operationRunner>>>;
  afterAnswer?: () => Promise<void>;
}

/**
 * The call queue's processor (src/workers/call-consumer.ts takes the jobs): real-time agent operations.
 * The consumer answers the waiting agent with `result` at once, then runs `afterAnswer`.
 */
export function transactionProcessor(deps: TransactionDeps) {
  const run = operationRunner(deps);
  const settle = settleEnded(deps);
  /** `delivery`: 1 for a job's first run, more when its worker died holding it (call-queue.ts). */
  return async (job: CallJob<TransactionJob>, delivery = 1): Promise<CallOutcome> => {
    const after: AfterAnswer = { toProcess: [] };
    const result = await run(job, delivery, after);
    const { toProcess, finish } = after;
    if (toProcess.length === 0 && !finish) return { result };
    return {
      result,
      afterAnswer: async () => {
        // An end that charged in its own write: its ledger entry and charged mark; a failure is left to
        // the recovery sweep, which settles the marker and the record (end-charge.ts).
        await finish?.().catch((err: unknown) =>
          deps.ctx.logger.warn({ err, jobId: job.id }, 'charge applied; its ledger entry is left to the recovery sweep'),
        );
        if (toProcess.length > 0) await settle(toProcess);
      },
    };
  };
}

/**
 * What follows an end decided 'done', once the agent has its answer: each ended entry charged. A
 * process that runs the processing queue too (deps.processInline) charges them here, in the end's own
 * job (issue 36: a queue job less per party, its add, fetch and completion: three Redis round trips
 * and BullMQ's handling of a job). Whatever it cannot finish here (an error, MongoDB unreachable) goes
 * to the processing queue, with its retries; a worker killed meanwhile leaves the entries ended, and
 * the end's re-run or the maintenance pass (requeue-ended) queues them. A process that does not run
 * the processing queue queues them all, as before.
 */
function settleEnded(deps: TransactionDeps) {
  return async (jobs: ProcessingJob[]) => {
    if (!deps.processInline) return queueProcessing(deps, jobs);
    const left = await chargeEnded(deps, jobs);
    if (left.length > 0) await queueProcessing(deps, left);
  };
}

/**
 * Charges ended entries in this process (settleEnded); returns those it could not charge, for the queue.
 * The parties side by side, as the processing queue would run their jobs: each charge is on its own
 * account and record, and their record inserts then travel in one command (group-commands.ts; their
 * later writes too, when they come in the same turn of the event loop).
 */
export async function chargeEnded(deps: TransactionDeps, jobs: ProcessingJob[]): Promise<ProcessingJob[]> {
  const processing = processingDeps(deps);
  const outcomes = await Promise.all(
    jobs.map((job) =>
      processEndedCall(processing, job).then(
        (r) => r.outcome,
        (err: unknown) => {
          deps.ctx.logger.warn({ err, entry_id: job.entry_id }, 'ended call not charged in its end job: queued for processing');
          return 'failed' as const;
        },
      ),
    ),
  );
  return jobs.filter((_, i) => outcomes[i] === 'failed' || outcomes[i] === 'not-ended');
}

/** What an end leaves for after its answer: the entries it ended, to charge, or the rest of its own charge. */
interface AfterAnswer {
  toProcess: ProcessingJob[];
  finish?: () => Promise<void>;
}

function operationRunner(deps: TransactionDeps) {
  return async (job: CallJob<TransactionJob>, delivery: number, after: AfterAnswer) => {
    const data = job.data;
    // Only a job that has not started may be dropped unseen: a re-run after a crash finishes or undoes
    // what its first run did (decide.ts), even past the deadline.
    const firstStart = delivery <= 1;
    const ref = { id: job.id, deadline: data.deadline, rerun: !firstStart };
    if (firstStart && !beforeDeadline(data.deadline)) {
      deps.ctx.logger.warn({ jobId: job.id, op: data.op }, 'dropped: past its deadline');
      if (data.op === 'authorization') return notAuthorized(Reasons.TIMEOUT);
      // Past the deadline itself the agent has stopped waiting and records its own abandonment: nothing
      // to record here (after a Redis outage, thousands of such jobs come at once).
      if (data.op === 'noop' || Date.now() >= data.deadline) return refused(Reasons.TIMEOUT);
      // Within the deadline's margin the agent still waits and relays this answer: recorded before it is
      // answered, as every TIMEOUT, so another copy of the job (a push the Redis client sent again after
      // a dropped connection), taken a moment earlier, cannot decide 'done' after it. Decided already by
      // that copy, its answer is given.
      const ref = { jobId: job.id, op: data.op, account_tag: data.account_tag, transaction_tag: data.transaction_tag };
      return fencedAnswer(deps, ref);
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
      case 'end': {
        const outcome = await endCall(deps, data, ref).catch(async (err: unknown): Promise<EndOutcome> => ({
          result: await failed(deps, data, ref.id, err, () => takeBackEnd(deps, data.account_tag, data.transaction_tag, ref.id)),
          toProcess: [],
        }));
        const answer = await decided(data, outcome.result);
        if (answer.ok) {
          after.toProcess.push(...outcome.toProcess);
          after.finish = outcome.afterAnswer;
        }
        return answer;
      }
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
    const decision = await abandonUnlessDecided(deps.ctx.mongo.collections, {
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
