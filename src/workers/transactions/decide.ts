import { decideAbandoned, decideDone, OperationRef } from '../../shared/outcomes';
import type { OperationResult } from '../../shared/queues/payloads';
import { beforeDeadline, Reasons, TransactionDeps } from './deps';

/** The agent job an operation runs in: its id names the outcome; its deadline is when the agent stops waiting. */
export interface JobRef {
  id: string;
  deadline: number;
}

export const timedOut: OperationResult = { ok: false, reason: Reasons.TIMEOUT };

/**
 * Ends an operation whose changes are made: records it 'done' with `result` while the agent can still
 * hear it (before the deadline, with the margin), else records it abandoned. If it ends up abandoned
 * (by the agent, which answered TIMEOUT, or here), `undo` takes the changes back and the answer is
 * TIMEOUT, which is then true. A re-run finding 'done' answers what was decided.
 */
export async function conclude(
  deps: TransactionDeps,
  ref: OperationRef,
  deadline: number,
  result: OperationResult,
  undo: () => Promise<void>,
): Promise<OperationResult> {
  const { outcomes } = deps.ctx.mongo.collections;
  const intime = beforeDeadline(deadline);
  const decision = intime ? await decideDone(outcomes, ref, result) : await decideAbandoned(outcomes, ref);
  const state = decision.won ? (intime ? 'done' : 'abandoned') : decision.doc.state;
  if (state === 'done') return decision.won ? result : (decision.doc.result ?? result);
  await undo();
  deps.ctx.logger.warn({ jobId: ref.jobId, op: ref.op, transaction_tag: ref.transaction_tag }, 'operation abandoned by its deadline: changes undone');
  return timedOut;
}
