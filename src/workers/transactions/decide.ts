import { abandonUnlessDecided, decideAbandoned, decideDone, OperationRef, OutcomeDoc } from '../../shared/outcomes';
import type { OperationResult } from '../../shared/queues/payloads';
import { beforeDeadline, Reasons, TransactionDeps } from './deps';

/** The agent job an operation runs in: its id names the outcome; its deadline is when the agent stops waiting. */
export interface JobRef {
  id: string;
  deadline: number;
}

export const timedOut: OperationResult = { ok: false, reason: Reasons.TIMEOUT };

/**
 * Records the operation 'done' with `result` while the agent can still hear it (before `deadline`, with
 * the margin), else 'abandoned'; the first decision recorded wins. Returns the decision in force, and
 * the earlier document when another one (the agent, an earlier run) decided first.
 */
export async function decideByDeadline(
  deps: TransactionDeps,
  ref: OperationRef,
  deadline: number,
  result: OperationResult,
): Promise<{ state: OutcomeDoc['state']; earlier: OutcomeDoc | null }> {
  const { outcomes } = deps.ctx.mongo.collections;
  const intime = beforeDeadline(deadline);
  const decision = intime ? await decideDone(outcomes, ref, result) : await decideAbandoned(outcomes, ref);
  if (decision.won) return { state: intime ? 'done' : 'abandoned', earlier: null };
  return { state: decision.doc.state, earlier: decision.doc };
}

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
  const { state, earlier } = await decideByDeadline(deps, ref, deadline, result);
  if (state === 'done') return earlier?.result ?? result;
  await undo();
  deps.ctx.logger.warn({ jobId: ref.jobId, op: ref.op, transaction_tag: ref.transaction_tag }, 'operation abandoned by its deadline: changes undone');
  return timedOut;
}

const FATE_POLL_MS = 50;

/**
 * The fate of another agent operation whose changes stand in the way of ours (a client's retry while the
 * first attempt is still in flight): 'done' or 'abandoned' once decided; past its own deadline with no
 * outcome, nobody was told it happened, so it is abandoned here; otherwise waited for until our own
 * deadline, then 'unknown' (the caller gives up, having changed nothing).
 */
export async function fateOf(deps: TransactionDeps, other: OperationRef & { deadline: number | undefined }, deadline: number): Promise<'done' | 'abandoned' | 'unknown'> {
  const { outcomes } = deps.ctx.mongo.collections;
  const { deadline: otherDeadline, ...ref } = other;
  for (;;) {
    const doc = await outcomes.findOne({ _id: ref.jobId }, { projection: { state: 1 } });
    if (doc) return doc.state;
    if (otherDeadline !== undefined && !beforeDeadline(otherDeadline)) {
      return abandonUnlessDecided(outcomes, ref);
    }
    if (!beforeDeadline(deadline, FATE_POLL_MS)) return 'unknown';
    await new Promise((resolve) => setTimeout(resolve, FATE_POLL_MS));
  }
}
