import { randomUUID } from 'node:crypto';
import type { Filter } from 'mongodb';
import { AccountDoc, callId, isReservation, RunningTransaction } from '../../shared/domain/types';
import { covers, notFenced, type OutcomeDoc } from '../../shared/domain/calls/decisions';
import { refusalAlert } from '../../shared/domain/alerts';
import { beforeDeadline, type BeginJob, done, type OperationResult, type Reason, Reasons, refused } from '../../shared/domain/calls';
import { availableBalance, canAffordStartAt, hasSpendLimits } from '../../shared/domain/rating';
import { spendRoom } from '../../shared/domain/ledger';
import { conclude, decidedDone, decideRefusal, fencedAnswer, JobRef } from './decide';
import { beginFate } from './fates';
import { removeEntry } from './entries';
import { foreignRecordFate } from './refund';
import { finishPendingRollbacks } from './rollback';
import { TransactionDeps } from './deps';
import { Party, resolveParties } from './parties';
import { dropExpired, releaseReservations, restoreReservation, takeOverReservation } from './reservations';
import { rateParties } from './route';
import type { EntryRecovery } from './recovery';

const MAX_OPTIMISTIC_ATTEMPTS = 200;

/** `decided`: the entry carries `begin_decided` (its write was the begin's decision, see tryBegin). */
type Insertion =
  /** `made`: the entry as this attempt wrote it (absent when an earlier run of the job had). */
  | {
      ok: true;
      entryId: string;
      decided: boolean;
      made?: RunningTransaction;
      /** The call's reservation the entry took the place of: put back if the begin is undone. */
      replaced?: RunningTransaction;
    }
  | { ok: false; reason: Reason; fenced?: true };

/**
 * For the write that decides a single-party begin (issue 36): the job's fence must be absent from the
 * account (src/shared/domain/calls/decisions.ts), and the write is made only while the agent still waits.
 */
const unfenced = (entry: RunningTransaction) => (entry.begin_decided ? notFenced(entry.begin_job!) : {});
const fencedOut = (account: AccountDoc, entry: RunningTransaction) =>
  entry.begin_decided === true &&
  (account.fenced_jobs?.some((f) => f.job === entry.begin_job) === true || !beforeDeadline(entry.begin_deadline!));

/**
 * Adds a running entry to one account. The concurrency limit is part of the update's filter (the
 * array may not yet hold `max` entries), so parallel begins can never exceed it. For prepaid accounts
 * the balance check reads the account and the write is conditional on its `rev` being unchanged:
 * check and insert act as one atomic step, retried when another change came in between.
 */
async function insertEntry(deps: TransactionDeps, party: Party, entry: RunningTransaction): Promise<Insertion> {
  const { accounts } = deps.ctx.mongo.collections;
  let account: AccountDoc | null = party.account;
  /** The hold of this call's reservation, found expired: the grant the proxy holds was sized on it. */
  let expiredHold: bigint | null = null;
  for (let attempt = 0; attempt < MAX_OPTIMISTIC_ATTEMPTS; attempt++) {
    if (!account) return { ok: false, reason: Reasons.NOT_FOUND };
    const running = account.running_transactions ?? [];
    const same = running.find((r) => r.call_id === entry.call_id);
    // This very job inserted it before a crash: a re-run carries on from there.
    if (same && same.begin_job === entry.begin_job) return { ok: true, entryId: same.id, decided: same.begin_decided === true };
    // Abandoned by the agent (it answered TIMEOUT), or too late to be heard: the decision cannot be made.
    if (fencedOut(account, entry)) return { ok: false, reason: Reasons.TIMEOUT, fenced: true };
    const prepaid = account.type === 'PREPAID' && !party.inbound;
    if (same && isReservation(same) && same.reserved_until!.getTime() <= Date.now()) {
      // Expired, it holds nothing: its slot and the room of its hold may have gone to other calls since
      // (docs/SIP.md, "Reservations and timestamps"). Removed, and the begin decides afresh; its hold is
      // what the proxy's timer was granted on, so the call takes it again only if the limits' room has it.
      if (same.hold !== undefined && same.hold !== null) expiredHold = same.hold;
      await dropExpired(accounts, account, new Date());
      account = await accounts.findOne({ _id: account._id, account_tag: account.account_tag });
      continue;
    }
    if (same && isReservation(same)) {
      // The call's authorization holds its slot: the entry takes it over, so the limit is not checked again.
      // Refused, the reservation stays until the refusal is decided (begin releases it then, if the
      // proxy hears it; past the deadline the call may still run on it).
      if (prepaid && !canAffordStartAt(entry.rate, entry.timestamp_begin, availableBalance(account.balance, running, new Date())))
        return { ok: false, reason: Reasons.BALANCE_INSUFFICIENT };
      // Its authorization's hold (spend limits) stays with the call: the limits already granted it.
      const taking = same.hold !== undefined && same.hold !== null ? { ...entry, hold: same.hold } : entry;
      if (await takeOverReservation(deps, account, same.id, taking, prepaid, unfenced(entry)))
        return { ok: true, entryId: entry.id, decided: entry.begin_decided === true, made: taking, replaced: same };
      account = await accounts.findOne({ _id: account._id, account_tag: account.account_tag });
      continue;
    }
    if (same) {
      // Another begin of this call (a client's retry) stands only if it is decided 'done'.
      const fate = await beginFate(deps, same, account.account_tag, entry.begin_deadline!);
      if (fate === 'done') return { ok: false, reason: Reasons.DUPLICATE_TRANSACTION };
      if (fate === 'unknown') return { ok: false, reason: Reasons.TIMEOUT };
      await removeEntry(deps, account.account_tag, same.id);
      account = await accounts.findOne({ _id: account._id, account_tag: account.account_tag });
      continue;
    }
    const max = account.max_concurrent_transactions;
    if (max !== null && max !== undefined && running.length >= max) {
      // Reservations past their time hold no slot: removed, the account is read again.
      if ((await dropExpired(accounts, account, new Date())) > 0) {
        account = await accounts.findOne({ _id: account._id, account_tag: account.account_tag });
        continue;
      }
      return { ok: false, reason: Reasons.TOO_MANY_RUNNING_TRANSACTIONS };
    }
    if (prepaid && !canAffordStartAt(entry.rate, entry.timestamp_begin, availableBalance(account.balance, running, new Date()))) {
      return { ok: false, reason: Reasons.BALANCE_INSUFFICIENT };
    }
    // Spend limits without a reservation to take over: the room they leave now must pay the start (and
    // the hold of an expired reservation, kept by the entry), and the insert is conditional on the
    // account as read (like a prepaid balance).
    const limited = !party.inbound && hasSpendLimits(account);
    const hold = limited ? expiredHold : null;
    if (limited) {
      const room = (await spendRoom(deps.ctx.mongo.collections, account, new Date(), entry.call_id))!;
      if (!canAffordStartAt(entry.rate, entry.timestamp_begin, room) || (hold !== null && room < hold))
        return { ok: false, reason: Reasons.SPEND_LIMIT_EXCEEDED };
    }
    // max 0 means no call at all.
    if (max !== null && max !== undefined && max <= 0) return { ok: false, reason: Reasons.TOO_MANY_RUNNING_TRANSACTIONS };
    const pushed = hold !== null ? { ...entry, hold } : entry;
    if (await pushEntry(deps, account, pushed, prepaid || limited)) {
      return { ok: true, entryId: entry.id, decided: entry.begin_decided === true, made: pushed };
    }
    // Someone changed the account in between: re-read and decide again.
    account = await accounts.findOne({ _id: account._id, account_tag: account.account_tag });
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { ok: false, reason: Reasons.BUSY };
}

/**
 * The write that adds the entry: to an account without an entry of the call, under the concurrency
 * limit (the array may hold at most max - 1 entries now), not fenced for a decided entry, and, when
 * `asRead`, on the account exactly as read (its `rev`). True when made. The account's charge markers
 * this process settled are pulled by the same write (settled-markers.ts).
 */
async function pushEntry(deps: TransactionDeps, account: AccountDoc, entry: RunningTransaction, asRead: boolean): Promise<boolean> {
  const max = account.max_concurrent_transactions;
  const filter: Filter<AccountDoc> = {
    _id: account._id,
    account_tag: account.account_tag,
    'running_transactions.call_id': { $ne: entry.call_id },
    ...unfenced(entry),
    ...(max !== null && max !== undefined ? { [`running_transactions.${max - 1}`]: { $exists: false } } : {}),
    ...(asRead ? { rev: account.rev ?? { $exists: false } } : {}),
  };
  const pull = deps.settledMarkers?.pullUpdate(account.account_tag);
  const result = await deps.ctx.mongo.collections.accounts.updateOne(filter, {
    $push: { running_transactions: entry },
    $inc: { rev: 1 },
    ...pull?.update,
  });
  if (result.modifiedCount !== 1) return false;
  pull?.done();
  return true;
}

/**
 * The entry added on the caller as its authorization read it (authorization-reads.ts), without reading
 * it again: only where the plain insert is the whole decision (no entry of the call, room under the
 * limit, the balance covers the start, no spend limits, not fenced), and only on the account exactly as
 * read. 'stale' otherwise: nothing made, the begin decides on a fresh read.
 */
async function insertOnAuthorizationRead(
  deps: TransactionDeps,
  account: AccountDoc,
  entry: RunningTransaction,
): Promise<Insertion | 'stale'> {
  const running = account.running_transactions ?? [];
  const max = account.max_concurrent_transactions;
  const plain =
    !running.some((r) => r.call_id === entry.call_id) &&
    !fencedOut(account, entry) &&
    (max === null || max === undefined || (max > 0 && running.length < max)) &&
    !hasSpendLimits(account) &&
    (account.type !== 'PREPAID' ||
      canAffordStartAt(entry.rate, entry.timestamp_begin, availableBalance(account.balance, running, new Date())));
  if (plain && (await pushEntry(deps, account, entry, true))) {
    return { ok: true, entryId: entry.id, decided: entry.begin_decided === true, made: entry };
  }
  if (plain) deps.authorizationReads?.changed(account.account_tag);
  return 'stale';
}

/**
 * beginTransaction: every party (caller, linked accounts, inbound receiver) must accept the call;
 * a refusal by any of them removes the entries already added, leaving nothing behind. Accepted, the
 * call is concluded (decide.ts): kept if decided 'done' in time, its entries removed if abandoned.
 */
export async function begin(deps: TransactionDeps, job: BeginJob, ref: JobRef): Promise<OperationResult> {
  // A re-run of a begin decided 'done': its entries were all made before the decision.
  const decided = await decidedDone(deps, ref);
  if (decided) return decided.result ?? done();
  let result = await tryBegin(deps, job, ref);
  // A rollback of the same call answered ok but not carried out yet: finish it, then decide again.
  if (
    !result.ok &&
    result.reason === Reasons.DUPLICATE_TRANSACTION &&
    (await finishPendingRollbacks(deps, job.account_tag, job.transaction_tag)) > 0
  ) {
    result = await tryBegin(deps, job, ref);
  }
  // Fenced: this job can make nothing; its answer is the decision in force.
  if (!result.ok && result.fenced) {
    return fencedAnswer(deps, { jobId: ref.id, op: 'begin', account_tag: job.account_tag, transaction_tag: job.transaction_tag });
  }
  if (!result.ok) {
    if (result.refusedBy) {
      void refusalAlert(deps.ctx, result.refusedBy, {
        transaction_tag: job.transaction_tag,
        destination: job.destination,
        reason: result.reason!,
      });
    }
    // The call will not run: what its authorization holds on its parties (a reseller's hold, a slot)
    // goes now, not at its expiry; the proxy's rollback would find nothing to release it by once the
    // caller holds nothing. Only once the refusal is decided as the answer (in time: past the deadline the
    // agent answers TIMEOUT and the call may run to its grant), and only a refusal of this call's own
    // start (not BUSY, TIMEOUT or DUPLICATE_TRANSACTION, which leave the call as it was or name another
    // begin of it). Decided here, the worker's own deciding finds it in the process's decision memory.
    if (result.parties && !RELEASE_KEPT.has(result.reason!)) {
      const opRef = { jobId: ref.id, op: 'begin', account_tag: job.account_tag, transaction_tag: job.transaction_tag };
      const answer = await decideRefusal(deps, opRef, ref.deadline, refused(result.reason));
      if (!answer.ok && answer.reason === result.reason)
        await releaseReservations(deps.ctx.mongo.collections.accounts, result.parties, callId(job.account_tag, job.transaction_tag));
      return answer;
    }
    return refused(result.reason);
  }
  const made = result.inserted.map((e) => ({ account_tag: e.account_tag, entry_id: e.id }));
  if (result.decided) {
    // A single-party call: the entry's own write was the decision (tryBegin). Its entry is kept for the
    // end, which charges in its own write (end-charge.ts); a re-run's entry is not known here.
    deps.decisions?.remember(ref.id, { state: 'done', made, result: done() });
    if (result.entry) deps.begunEntries?.remember(job.account_tag, result.entry);
    return done();
  }
  const opRef = { jobId: ref.id, op: 'begin', account_tag: job.account_tag, transaction_tag: job.transaction_tag, made };
  return conclude(deps, opRef, ref.deadline, done(), async (undo) => {
    const byId = new Map(result.inserted.map((e) => [e.id, e]));
    await Promise.all(undo.map((e) => unmake(deps, byId.get(e.entry_id!) ?? { account_tag: e.account_tag, id: e.entry_id! })));
  });
}

/** Refusals after which the call's reservations stay: the call may still run, or they are another begin's. */
const RELEASE_KEPT: ReadonlySet<string> = new Set([Reasons.BUSY, Reasons.TIMEOUT, Reasons.DUPLICATE_TRANSACTION]);

type BeginAttempt =
  | (OperationResult & { ok: false; refusedBy?: AccountDoc; fenced?: true; parties?: string[] })
  | { ok: true; inserted: Inserted[]; decided: boolean; entry?: RunningTransaction };

/** An entry a begin made, and the call's reservation it took the place of, if any. */
interface Inserted {
  account_tag: string;
  id: string;
  replaced?: RunningTransaction;
}

/**
 * Takes back an entry this begin made: the reservation it took the place of comes back (the call may
 * still run on what its authorization reserved when the agent answered TIMEOUT), else it goes.
 */
async function unmake(deps: TransactionDeps, made: Inserted): Promise<void> {
  if (made.replaced) await restoreReservation(deps.ctx.mongo.collections.accounts, made.account_tag, made.id, made.replaced);
  else await removeEntry(deps, made.account_tag, made.id);
}

async function tryBegin(deps: TransactionDeps, job: BeginJob, ref: JobRef, useAuthorizationRead = true): Promise<BeginAttempt> {
  const { accounts, transactions } = deps.ctx.mongo.collections;
  // The caller as its authorization read it, for a single-party call (authorization-reads.ts).
  const kept = useAuthorizationRead && !job.destination_account_tag ? deps.authorizationReads?.take(job.account_tag) : undefined;
  const asAuthorized = kept && kept.active !== false && !kept.linked_accounts?.length ? kept : undefined;
  // A tag already recorded for this caller would collide with its record (unless that record is on its
  // way out). Read beside the parties: neither read depends on the other, and call setup waits for both.
  // (One aggregate with a $lookup would save a command, but the embedded MongoDB-wire server runs the
  // lookup as a scan of the records: docs/DECISIONS.md.)
  const [resolved, recorded] = await Promise.all([
    asAuthorized
      ? { parties: [{ account: asAuthorized, inbound: false }] }
      : resolveParties(accounts, job.account_tag, job.destination_account_tag),
    transactions.findOne({ account_tag: job.account_tag, transaction_tag: job.transaction_tag, origin_account_tag: job.account_tag }),
  ]);
  if ('refusal' in resolved) return { ok: false, reason: resolved.refusal.reason };
  if (recorded) {
    const fate = await foreignRecordFate(deps, recorded, ref.deadline);
    if (fate === 'unknown') return { ok: false, reason: Reasons.TIMEOUT };
    if (fate === 'stands') return { ok: false, reason: Reasons.DUPLICATE_TRANSACTION };
  }
  const index = await deps.rating.index();
  const at = new Date(job.timestamp_begin);
  const rated = rateParties(index, resolved.parties, { destination: job.destination, at, carrierIp: job.carrier_ip });
  if (!Array.isArray(rated)) return asAuthorized ? tryBegin(deps, job, ref, false) : { ok: false, reason: Reasons.UNREACHABLE_DESTINATION };
  const callParties = rated.map((r) => r.party.account.account_tag);
  // The caller's carrier is the one the call goes out on; parents bill it at their own rates.
  const carrierIp = job.carrier_ip ?? rated[0].rate.carrierIp;
  const inserted: Inserted[] = [];
  const call = callId(job.account_tag, job.transaction_tag);
  // A call of one party is decided by the write that makes its entry, conditional on the agent not
  // having abandoned it (issue 36: no decision document). With more parties, each entry is made and the
  // decision recorded afterwards (conclude): all or none of them stay.
  const single = rated.length === 1;
  let decided = false;
  let made: RunningTransaction | undefined;
  for (const { party, rate } of rated) {
    const entry: RunningTransaction = {
      id: randomUUID(),
      transaction_tag: job.transaction_tag,
      origin_account_tag: job.account_tag,
      call_id: call,
      source: job.source,
      destination: job.destination,
      carrier_ip: party.inbound ? rate.carrierIp || carrierIp : carrierIp,
      rate: rate.rate,
      in_progress: true,
      inbound: party.inbound,
      timestamp_begin: at,
      timestamp_end: null,
      timestamp_auth: job.timestamp_auth ? new Date(job.timestamp_auth) : null,
      source_ip: job.source_ip,
      tags: job.tags,
      call_parties: callParties,
      begin_job: ref.id,
      begin_deadline: ref.deadline,
      ...(single ? { begin_decided: true } : {}),
    };
    const result = asAuthorized ? await insertOnAuthorizationRead(deps, party.account, entry) : await insertEntry(deps, party, entry);
    // Not decidable on authorization's read: decided as any begin, on fresh reads (nothing was made).
    if (result === 'stale') return tryBegin(deps, job, ref, false);
    if (!result.ok) {
      await Promise.all(inserted.map((e) => unmake(deps, e)));
      return result.fenced
        ? { ok: false, reason: result.reason, fenced: true }
        : { ok: false, reason: result.reason, refusedBy: party.account, parties: callParties };
    }
    inserted.push({
      account_tag: party.account.account_tag,
      id: result.entryId,
      ...(result.replaced ? { replaced: result.replaced } : {}),
    });
    decided = result.decided;
    made = result.made;
  }
  return { ok: true, inserted, decided: single && decided, entry: made };
}

/**
 * Takes back what the begin job `jobId` of the call (caller, tag) made on the call's parties, except
 * what its decision keeps (`decision`: 'abandoned' keeps nothing). The parties are the caller's entry's
 * (the caller's entry is always made first: without it this job made nothing). Safe to repeat.
 */
export async function takeBackBegin(
  deps: TransactionDeps,
  callerTag: string,
  transactionTag: string,
  jobId: string,
  decision: Pick<OutcomeDoc, 'state' | 'made'>,
): Promise<number> {
  const { accounts } = deps.ctx.mongo.collections;
  const call = callId(callerTag, transactionTag);
  const entryOn = async (tag: string) =>
    (
      await accounts.findOne(
        { account_tag: tag },
        { projection: { running_transactions: { $elemMatch: { call_id: call, begin_job: jobId } } } },
      )
    )?.running_transactions?.[0];
  const callerEntry = await entryOn(callerTag);
  const parties = callerEntry?.call_parties ?? [callerTag];
  let removed = 0;
  for (const tag of parties) {
    const entry = tag === callerTag ? callerEntry : await entryOn(tag);
    // An entry whose write was its begin's decision stands, whatever this caller believes.
    if (!entry || entry.begin_decided || covers(decision, { account_tag: tag, entry_id: entry.id })) continue;
    if (await removeEntry(deps, tag, entry.id)) removed += 1;
  }
  return removed;
}

/** The recovery sweep's part for begin: an entry whose begin was never decided 'done' is removed. */
export const beginRecovery: EntryRecovery = {
  op: 'begin',
  field: 'begin_job',
  pending: (entry) =>
    entry.begin_job && !entry.begin_decided && entry.begin_deadline != null
      ? { jobId: entry.begin_job, deadline: entry.begin_deadline }
      : null,
  undo: (deps, accountTag, entry) => removeEntry(deps, accountTag, entry.id),
};
