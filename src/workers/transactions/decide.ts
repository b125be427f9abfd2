import {
  abandonUnlessDecided,
  covers,
  decideAbandoned,
  decideDone,
  fence,
  OperationRef,
  OutcomeDoc,
  RollbackTarget,
} from '../../shared/domain/calls/decisions';
import { beforeDeadline, done, type OperationResult, Reasons, refused } from '../../shared/domain/calls';
import { ROLLBACK_OUTCOMES } from '../../shared/domain/store';
import { TransactionDeps } from './deps';
import type { KnownDecision } from './decision-memory';

/** The agent job an operation runs in: its id names the outcome; its deadline is when the agent stops waiting. */
export interface JobRef {
  id: string;
  deadline: number;
  /**
   * False on a job's first run as BullMQ counts it: saves the look-up of `decidedDone`. A run from a
   * restored Redis snapshot counts as first and may still find a decision: `conclude` and
   * `decideRefusal` then answer that decision and take back what the run made.
   */
  rerun?: boolean;
}

export const timedOut: OperationResult = refused(Reasons.TIMEOUT);

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
  const intime = beforeDeadline(deadline);
  const decision = intime
    ? await decideDone(deps.ctx.mongo.collections.outcomes, ref, result)
    : await decideAbandoned(deps.ctx.mongo.collections, ref);
  if (decision.won) {
    const state = intime ? 'done' : 'abandoned';
    deps.decisions?.remember(ref.jobId, { state, made: ref.made, result: intime ? result : null });
    return { state, earlier: null };
  }
  deps.decisions?.remember(ref.jobId, decision.doc);
  return { state: decision.doc.state, earlier: decision.doc };
}

/**
 * Ends an operation whose changes are made (`ref.made`: its entries or records): records it 'done' with
 * `result` while the agent can still hear it (before the deadline, with the margin), else records it
 * abandoned. If it ends up abandoned (by the agent, which answered TIMEOUT, or here), `undo` takes the
 * changes back and the answer is TIMEOUT, which is then true. Decided 'done' by an earlier run of the
 * same job, the answer is that run's, and whatever this run made beyond what that decision covers (made
 * after the call was rolled back or begun again) is taken back.
 */
export async function conclude(
  deps: TransactionDeps,
  ref: OperationRef & { made: RollbackTarget[] },
  deadline: number,
  result: OperationResult,
  undo: (made: RollbackTarget[]) => Promise<void>,
): Promise<OperationResult> {
  const { state, earlier } = await decideByDeadline(deps, ref, deadline, result);
  if (state === 'done') {
    const extra = earlier ? ref.made.filter((share) => !covers(earlier, share)) : [];
    if (extra.length > 0) {
      await undo(extra);
      deps.ctx.logger.warn(
        { jobId: ref.jobId, op: ref.op, transaction_tag: ref.transaction_tag, undone: extra.length },
        're-run of a decided operation: what it made again is undone',
      );
    }
    return earlier?.result ?? result;
  }
  await undo(ref.made);
  deps.ctx.logger.warn(
    { jobId: ref.jobId, op: ref.op, transaction_tag: ref.transaction_tag },
    'operation abandoned by its deadline: changes undone',
  );
  return timedOut;
}

/**
 * Records a refusal before the agent hears it, like any other answer. The worker publishes its answer
 * before BullMQ marks the job completed, so a worker killed in between, or Redis restored from a
 * snapshot taken before the job finished, runs the job again; a refusal that recorded nothing would be
 * decided anew on the state of that moment (a slot freed, an account activated, a call begun since)
 * and could make what the client was told was refused (found by the chaos test: a begin answered
 * TOO_MANY_RUNNING_TRANSACTIONS, then held the call on the caller and its parent). Recorded 'done'
 * with the refusal and nothing made (`made: []`, so a re-run's changes are taken back by `conclude`),
 * a re-run answers the same. A TIMEOUT or UNAVAILABLE is recorded 'abandoned' unless decided already
 * (the recovery sweep then takes back whatever the operation left). Decided otherwise by an earlier
 * run or by the agent, that decision is the answer. Costs one grouped insert per refusal, none on an
 * accepted call. MongoDB unreachable, this throws: no answer is published, and the agent's own wait
 * decides (TIMEOUT recorded, or the outcome unknown).
 */
export async function decideRefusal(
  deps: TransactionDeps,
  ref: Pick<OperationRef, 'jobId' | 'op' | 'account_tag' | 'transaction_tag'>,
  deadline: number,
  result: OperationResult,
): Promise<OperationResult> {
  if (result.ok) return result;
  // Decided already in this process (a refused begin decides before it releases reservations): a
  // decision never changes, so it is the answer, without asking MongoDB again.
  const known = deps.decisions?.get(ref.jobId);
  if (known) return known.state === 'abandoned' ? timedOut : (known.result ?? done());
  if (result.reason === Reasons.TIMEOUT || result.reason === Reasons.UNAVAILABLE) return fencedAnswer(deps, ref, result);
  // A begin or end may decide by its own write (a single-party call): fenced first, a run of the same
  // job from a restored queue cannot make that write after this refusal; made already by an earlier
  // run, that write is the answer.
  const byWrite = await fence(deps.ctx.mongo.collections, ref);
  if (byWrite) return byWrite.result ?? done();
  // Nothing to carry out: a rollback refused is applied already (the recovery sweep skips it).
  const refusal = { ...ref, made: [], ...(ref.op === ROLLBACK_OUTCOMES.op ? { targets: [], applied_at: new Date() } : {}) };
  const { state, earlier } = await decideByDeadline(deps, refusal, deadline, result);
  if (state === 'abandoned') return timedOut;
  return earlier ? (earlier.result ?? done()) : result;
}

/**
 * The answer of an operation that can make nothing now: a begin or end that found itself fenced on the
 * caller's account (abandoned by the agent, refused before, or taken by a rollback:
 * src/shared/domain/calls/decisions.ts), or one that gave up (TIMEOUT, UNAVAILABLE). It is the decision
 * in force, recorded abandoned if there is none (`otherwise` is then the answer).
 */
export async function fencedAnswer(
  deps: TransactionDeps,
  ref: Pick<OperationRef, 'jobId' | 'op' | 'account_tag' | 'transaction_tag'>,
  otherwise: OperationResult = timedOut,
): Promise<OperationResult> {
  const decision = await abandonUnlessDecided(deps.ctx.mongo.collections, ref);
  deps.decisions?.remember(ref.jobId, decision);
  return decision.state === 'done' ? (decision.result ?? done()) : otherwise;
}

/**
 * The decision already recorded for this job, if a re-run finds one 'done': everything the operation
 * makes before its decision was made then, so the re-run only finishes what follows the decision and
 * answers the same (the call may have been rolled back or begun again since: making it again would be
 * a change nobody asked for). An 'abandoned' one is left to the normal path, which takes changes back.
 */
export async function decidedDone(deps: TransactionDeps, ref: JobRef): Promise<KnownDecision | null> {
  if (ref.rerun === false) return null;
  const known = deps.decisions?.get(ref.id);
  if (known) return known.state === 'done' ? known : null;
  const doc = await deps.ctx.mongo.collections.outcomes.findOne({ _id: ref.id });
  if (doc) deps.decisions?.remember(ref.id, doc);
  return doc?.state === 'done' ? doc : null;
}

const FATE_POLL_MS = 50;

/**
 * The fate of another agent operation whose entry or record (`share`) stands in the way of ours (a
 * client's retry while the first attempt is still in flight): 'done' if decided so and the decision
 * covers that share, 'abandoned' otherwise once decided; past its own deadline with no outcome, nobody
 * was told it happened, so it is abandoned here; otherwise waited for until our own deadline, then
 * 'unknown' (the caller gives up, having changed nothing).
 */
export type Fate = 'done' | 'abandoned' | 'unknown';

export async function fateOf(
  deps: TransactionDeps,
  other: OperationRef & { deadline: number | undefined; share: RollbackTarget },
  deadline: number,
): Promise<Fate> {
  const { outcomes } = deps.ctx.mongo.collections;
  const { deadline: otherDeadline, share, ...ref } = other;
  const fate = (decision: Pick<OutcomeDoc, 'state' | 'made'>) => (covers(decision, share) ? 'done' : 'abandoned');
  const known = deps.decisions?.get(ref.jobId);
  if (known) return fate(known);
  for (;;) {
    const doc = await outcomes.findOne({ _id: ref.jobId }, { projection: { state: 1, made: 1, result: 1 } });
    if (doc) {
      deps.decisions?.remember(ref.jobId, doc);
      return fate(doc);
    }
    if (otherDeadline !== undefined && !beforeDeadline(otherDeadline)) {
      const decision = await abandonUnlessDecided(deps.ctx.mongo.collections, ref);
      deps.decisions?.remember(ref.jobId, decision);
      return fate(decision);
    }
    if (!beforeDeadline(deadline, FATE_POLL_MS)) return 'unknown';
    await new Promise((resolve) => setTimeout(resolve, FATE_POLL_MS));
  }
}
