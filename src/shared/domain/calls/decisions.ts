import type { Collection } from 'mongodb';
import { groupInsert } from '../../infra/group-commands';
import type { AccountDoc, TransactionDoc } from '../types';
import { isApplied } from '../ledger/applied';
import { opIds, type LedgerEntryDoc } from '../ledger/model';
import { done, type OperationResult } from './results';

/**
 * The one place where an agent operation's fate is decided, so that every answer the agent gives is
 * true once the workers are done (docs/AGENT.md, "What an answer means"):
 * - a worker that has made an operation's changes records 'done' with its answer;
 * - an agent that stops waiting records 'abandoned' and answers TIMEOUT (or UNAVAILABLE).
 * The first insert under the job's id wins (a unique `_id`); the loser reads the winner's document: an
 * agent finding 'done' answers its result, a worker finding 'abandoned' undoes its changes. Kept for a
 * day (TTL): far longer than a job can still run (its lock and the recovery sweep work in seconds).
 *
 * A single-party call's begin and end decide without a document (issue 36): the one write that makes
 * the entry, or ends it, is the decision 'done' (the entry carries `begin_decided` / `end_decided`).
 * That write requires the job's id to be absent from the caller's `fenced_jobs`, and an abandonment of
 * a begin or end first fences the caller's account, a write that requires no entry decided by that job:
 * on one document, one of the two wins, and the abandonment then records 'abandoned' as for every other
 * operation (the readers of decisions look at both: `decidedBy` below, then the document).
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
  /** On the caller: the begin and end jobs of the entry or record, fenced before it goes (fenceJobs). */
  fence_jobs?: FencedJob[];
}

/**
 * A job a rollback fences; `done`: decided 'done' without a decision document (its own write), which
 * the fence then remembers for `decidedBy` once the entry or record that said so is gone.
 */
export interface FencedJob {
  job: string;
  done: boolean;
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

/** What an abandonment writes to: the decisions, and for begin and end the caller's account and records. */
export interface DecisionStore {
  outcomes: Collection<OutcomeDoc>;
  accounts: Collection<AccountDoc>;
  transactions: Collection<TransactionDoc>;
  ledger: Collection<LedgerEntryDoc>;
}

/** The operations a single-party call decides by its own write, and the entry fields that say so. */
const DECIDED_BY_WRITE = {
  begin: { job: 'begin_job', decided: 'begin_decided' },
  end: { job: 'end_job', decided: 'end_decided' },
} as const;

/**
 * A begin or end decided by its own write (its entry says so), or, the entry charged since, by the
 * record it left: the decision 'done' it stands for. Null when neither is found.
 */
export async function decidedBy(
  store: Pick<DecisionStore, 'accounts' | 'transactions' | 'ledger'>,
  ref: OperationRef,
): Promise<OutcomeDoc | null> {
  const fields = DECIDED_BY_WRITE[ref.op as keyof typeof DECIDED_BY_WRITE];
  if (!fields) return null;
  const doneDoc = (made: RollbackTarget): OutcomeDoc => ({
    _id: ref.jobId,
    state: 'done',
    op: ref.op,
    account_tag: ref.account_tag,
    transaction_tag: ref.transaction_tag,
    result: done(),
    made: [made],
    at: new Date(),
  });
  const holder = await store.accounts.findOne(
    { account_tag: ref.account_tag },
    {
      projection: {
        running_transactions: { $elemMatch: { [fields.job]: ref.jobId, [fields.decided]: true } },
        fenced_jobs: { $elemMatch: { job: ref.jobId, done: true } },
      },
    },
  );
  const entry = holder?.running_transactions?.[0];
  if (entry) return doneDoc({ account_tag: ref.account_tag, entry_id: entry.id });
  // Taken by a rollback, which fenced the job as one that was done: nothing of it stands any more.
  if (holder?.fenced_jobs?.length) return { ...doneDoc({ account_tag: ref.account_tag }), made: [] };
  const record = await store.transactions.findOne(
    { account_tag: ref.account_tag, transaction_tag: ref.transaction_tag, origin_account_tag: ref.account_tag, [fields.job]: ref.jobId },
    { projection: { _id: 1, state: 1 } },
  );
  if (!record) return null;
  // A record written before its charge (an end that charges in its own write: end-charge.ts) stands for
  // the decision only once the charge is applied: until then, that write may still miss.
  if (record.state === 'pending' && !(await isApplied(store, ref.account_tag, opIds.charge(record._id)))) return null;
  return doneDoc({ account_tag: ref.account_tag, entry_id: record._id });
}

/** The filter part a job's deciding write carries: the job is not fenced on the account. */
export const notFenced = (jobId: string) => ({ 'fenced_jobs.job': { $ne: jobId } });

/** Adds `jobId` to the account's fences unless it is there already (or `filter` does not hold). */
async function pushFence(accounts: Collection<AccountDoc>, accountTag: string, jobId: string, done: boolean, filter: object = {}) {
  await accounts.updateOne(
    { account_tag: accountTag, ...filter, ...notFenced(jobId) },
    { $push: { fenced_jobs: { job: jobId, at: new Date(), ...(done ? { done: true } : {}) } } },
  );
}

/**
 * Fences a begin or end on its caller's account: from now on its deciding write cannot happen (an
 * abandonment, or a refusal the worker is about to record: decide.ts decideRefusal). Returns
 * the decision 'done' instead when that write happened first (the entry, or the record the charged
 * entry left, carries the job). Other operations have no fence: null.
 */
export async function fence(store: DecisionStore, ref: OperationRef): Promise<OutcomeDoc | null> {
  const fields = DECIDED_BY_WRITE[ref.op as keyof typeof DECIDED_BY_WRITE];
  if (!fields) return null;
  await pushFence(store.accounts, ref.account_tag, ref.jobId, false, {
    running_transactions: { $not: { $elemMatch: { [fields.job]: ref.jobId, [fields.decided]: true } } },
  });
  // Fenced, no decided entry can appear any more; not fenced, one is there (or the account is not). In
  // both cases a write made before may have been charged since: its entry gone, its record carries the job.
  return decidedBy(store, ref);
}

/**
 * Fences jobs of a call a rollback takes away (their begin and end): a run of one of them afterwards
 * (its worker killed, its queue restored) finds its deciding write refused, and cannot begin or end the
 * call, or the next call under the same tag. Each job once; safe to repeat.
 */
export async function fenceJobs(accounts: Collection<AccountDoc>, accountTag: string, jobs: readonly FencedJob[]): Promise<void> {
  for (const { job, done } of jobs) await pushFence(accounts, accountTag, job, done);
}

/**
 * The agent's (or the recovery sweep's) side: nobody will be told this operation happened. A begin or
 * end is fenced on its caller first (see above); decided by its write already, that is the decision.
 */
export async function decideAbandoned(store: DecisionStore, ref: OperationRef): Promise<Decision> {
  const byWrite = await fence(store, ref);
  if (byWrite) return { won: false, doc: byWrite };
  return claim(store.outcomes, docOf(ref, 'abandoned', null));
}

/** Records an operation abandoned unless it was decided already; the decision in force. */
export async function abandonUnlessDecided(
  store: DecisionStore,
  ref: OperationRef,
): Promise<Pick<OutcomeDoc, 'state' | 'made' | 'result'>> {
  const decision = await decideAbandoned(store, ref);
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
export async function decideAbandonedWithin(store: DecisionStore, ref: OperationRef, ms: number): Promise<Decision> {
  const until = Date.now() + ms;
  for (;;) {
    const left = until - Date.now();
    try {
      return await Promise.race([
        decideAbandoned(store, ref),
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
