import type { Collection } from 'mongodb';
import { groupInsert } from '../../infra/group-commands';
import type { OperationResult } from './results';

/**
 * The one place where an agent operation's fate is decided, so that every answer the agent gives is
 * true once the workers are done (docs/AGENT.md, "What an answer means"):
 * - a worker that has made an operation's changes records 'done' with its answer;
 * - an agent that stops waiting records 'abandoned' and answers TIMEOUT (or UNAVAILABLE).
 * The first insert under the job's id wins (a unique `_id`); the loser reads the winner's document: an
 * agent finding 'done' answers its result, a worker finding 'abandoned' undoes its changes. Kept for a
 * day (TTL): far longer than a job can still run (its lock and the recovery sweep work in seconds).
 */
export interface OutcomeDoc {
  _id: string;
  state: 'done' | 'abandoned';
  /** The operation, for the recovery sweep (it re-applies a rollback decided but not finished). */
  op: string;
  account_tag: string;
  transaction_tag: string;
  result: OperationResult | null;
  /** What a rollback takes away, fixed when it is decided, so a re-run or the sweep finishes exactly that. */
  targets?: RollbackTarget[];
  /**
   * What a begin, end or record made before it was decided (its entries or records): the decision covers
   * these only. A re-run of the job after a crash (its lock expired) may make more, e.g. a record again
   * after the call was rolled back; those are not covered and are taken back (`covers`).
   */
  made?: RollbackTarget[];
  /** Set when the effects decided after the decision (rollback's) are all made. */
  applied_at?: Date;
  at: Date;
}

export type Decision = { won: true } | { won: false; doc: OutcomeDoc };

/** The insert is grouped with the process's concurrent decisions (one command for all of them). */
async function claim(outcomes: Collection<OutcomeDoc>, doc: OutcomeDoc): Promise<Decision> {
  if ((await groupInsert(outcomes, doc)) === 'inserted') return { won: true };
  const existing = await outcomes.findOne({ _id: doc._id });
  if (!existing) throw new Error(`outcome ${doc._id} vanished while being decided`);
  return { won: false, doc: existing };
}

/**
 * One party's share of a call a rollback removes: its running entry, or its record (by `_id`, never by
 * tag: the tag may be used again for a new call after this rollback is answered).
 */
export interface RollbackTarget {
  account_tag: string;
  entry_id?: string;
  record_id?: string;
}

export interface OperationRef {
  jobId: string;
  op: string;
  account_tag: string;
  transaction_tag: string;
  targets?: RollbackTarget[];
  made?: RollbackTarget[];
  /** A refused rollback: nothing to carry out, so it is applied when decided. */
  applied_at?: Date;
}

function docOf(ref: OperationRef, state: OutcomeDoc['state'], result: OperationResult | null): OutcomeDoc {
  const { jobId, ...rest } = ref;
  return { _id: jobId, state, ...rest, result, at: new Date() };
}

/** The worker's side: the operation's changes are made; `result` is its answer. */
export function decideDone(outcomes: Collection<OutcomeDoc>, ref: OperationRef, result: OperationResult): Promise<Decision> {
  return claim(outcomes, docOf(ref, 'done', result));
}

/** The agent's (or the recovery sweep's) side: nobody will be told this operation happened. */
export function decideAbandoned(outcomes: Collection<OutcomeDoc>, ref: OperationRef): Promise<Decision> {
  return claim(outcomes, docOf(ref, 'abandoned', null));
}

/** Records an operation abandoned unless it was decided already; the decision in force. */
export async function abandonUnlessDecided(
  outcomes: Collection<OutcomeDoc>,
  ref: OperationRef,
): Promise<Pick<OutcomeDoc, 'state' | 'made' | 'result'>> {
  const decision = await decideAbandoned(outcomes, ref);
  return decision.won ? { state: 'abandoned', result: null } : decision.doc;
}

/**
 * Whether a decision keeps this entry or record: decided 'done', and made before the decision (a
 * decision recorded without `made`, by an older version, covers all it finds).
 */
export function covers(decision: Pick<OutcomeDoc, 'state' | 'made'>, share: RollbackTarget): boolean {
  if (decision.state !== 'done') return false;
  return (
    !decision.made ||
    decision.made.some((m) => m.account_tag === share.account_tag && m.entry_id === share.entry_id && m.record_id === share.record_id)
  );
}

/**
 * The agent's abandonment, bounded in time: an agent must answer its caller even when MongoDB does not
 * answer (it then answers UNAVAILABLE, and the worker or the recovery sweep abandons the operation).
 * A failed attempt (MongoDB restarting: connection refused) is tried again until the bound, so a
 * restart shorter than it never turns into an answer given without the record.
 */
export async function decideAbandonedWithin(outcomes: Collection<OutcomeDoc>, ref: OperationRef, ms: number): Promise<Decision> {
  const until = Date.now() + ms;
  for (;;) {
    const left = until - Date.now();
    try {
      return await Promise.race([
        decideAbandoned(outcomes, ref),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`MongoDB did not answer within ${ms} ms`)), Math.max(0, left)).unref(),
        ),
      ]);
    } catch (err) {
      if (Date.now() + RETRY_PAUSE_MS >= until) throw err;
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    }
  }
}

const RETRY_PAUSE_MS = 250;
