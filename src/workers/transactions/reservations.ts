import type { AccountDoc, RunningTransaction } from '../../shared/domain/types';
import { expiredReservations, isReservation } from '../../shared/domain/types';
import type { Collections } from '../../shared/domain/store';
import type { TransactionDeps } from './deps';
import { Reasons } from '../../shared/domain/calls';

/**
 * Concurrency reservations (docs/DESIGN.md section 4, issue 11). An authorization with a transaction_tag
 * holds a slot on every party that has a limit, as an element of `running_transactions` flagged by
 * `reserved_until`: it counts against `max_concurrent_transactions` through the same array-index
 * filter as a begin, so parallel authorizations and begins together never exceed the limit. It has no
 * rate, so it costs nothing and never enters the available balance. Begin replaces it in place with
 * the call's running entry (the slot passes on, no second one is taken); rollback removes it like a
 * running entry; a reservation past its time holds nothing: whoever finds it in the way of a slot
 * removes it, and the maintenance pass removes the rest.
 * Parties without a limit get no reservation: there is no slot to hold, and it saves a write. Parties with
 * hourly or daily spend limits get one that holds money (`hold`, see reserveSlot), slot or no slot. The
 * caller gets one whenever another party of the call does: a rollback reads the call's parties from
 * what the caller holds (rollback.ts), and would otherwise leave a reseller's hold and slot in place.
 */

const MAX_ATTEMPTS = 50;

export type Reserved =
  | { ok: true; made: string | null }
  | { ok: false; reason: typeof Reasons.TOO_MANY_RUNNING_TRANSACTIONS | typeof Reasons.NOT_FOUND | typeof Reasons.BUSY | 'changed' };

/** Entries holding a slot at `now` other than the call's own (a retried authorization, or the call already begun). */
export function slotsHeld(running: readonly RunningTransaction[], now: Date, call: string): number {
  const expired = new Set(expiredReservations(running, now));
  return running.filter((e) => e.call_id !== call && !expired.has(e)).length;
}

/**
 * Removes the reservations of `account` past their time; the number removed. Each by its id and only
 * while still expired, so one renewed or taken over by begin meanwhile stays.
 */
export async function dropExpired(
  accounts: Collections['accounts'],
  account: Pick<AccountDoc, 'account_tag' | 'running_transactions'>,
  now: Date,
): Promise<number> {
  const removed = await Promise.all(
    expiredReservations(account.running_transactions ?? [], now).map((e) =>
      accounts.updateOne(
        { account_tag: account.account_tag, running_transactions: { $elemMatch: { id: e.id, reserved_until: { $lte: now } } } },
        { $pull: { running_transactions: { id: e.id } }, $inc: { rev: 1 } },
      ),
    ),
  );
  return removed.reduce((n, r) => n + r.modifiedCount, 0);
}

/**
 * Holds one slot on `account` for the call of `reservation`, atomically with the limit. A retried
 * authorization of the same call renews its reservation; a call already begun holds its slot already.
 * `made` names a reservation this call added (to release if another party refuses).
 * A reservation with a `hold` (spend limits, src/shared/domain/rating/limits.ts) is made even without a
 * concurrency limit, and only on the account exactly as the hold was computed from (its `rev`): when it
 * changed, 'changed' tells authorization to decide again, so parallel holds never add up past a limit.
 */
export async function reserveSlot(
  deps: TransactionDeps,
  account: AccountDoc,
  reservation: RunningTransaction,
  now: Date,
  /** Reserve even without a limit or a hold: the caller of a call another party reserves on. */
  always = false,
): Promise<Reserved> {
  const { accounts } = deps.ctx.mongo.collections;
  const holds = reservation.hold !== undefined && reservation.hold !== null;
  let doc: AccountDoc | null = account;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (!doc) return { ok: false, reason: Reasons.NOT_FOUND };
    if (holds && doc !== account) return { ok: false, reason: 'changed' };
    const running = doc.running_transactions ?? [];
    const same = running.find((e) => e.call_id === reservation.call_id);
    if (same) {
      if (isReservation(same)) {
        // A new hold replaces the old one only on the account as read, as a new reservation's would.
        const renewed = await renew(accounts, doc, same.id, reservation.reserved_until!, reservation.hold ?? null);
        if (!renewed && holds) return { ok: false, reason: 'changed' };
      }
      return { ok: true, made: null };
    }
    const max = doc.max_concurrent_transactions;
    const limited = max !== null && max !== undefined;
    if (!limited && !holds && !always) return { ok: true, made: null };
    if (limited) {
      if (max <= 0 || slotsHeld(running, now, reservation.call_id) >= max)
        return { ok: false, reason: Reasons.TOO_MANY_RUNNING_TRANSACTIONS };
      if (running.length >= max && (await dropExpired(accounts, doc, now)) > 0) {
        doc = await accounts.findOne({ _id: doc._id, account_tag: doc.account_tag });
        continue;
      }
    }
    const added = await accounts.updateOne(
      {
        _id: doc._id,
        account_tag: doc.account_tag,
        'running_transactions.call_id': { $ne: reservation.call_id },
        ...(limited ? { [`running_transactions.${max - 1}`]: { $exists: false } } : {}),
        ...(holds ? { rev: doc.rev ?? { $exists: false } } : {}),
      },
      { $push: { running_transactions: reservation }, $inc: { rev: 1 } },
    );
    if (added.modifiedCount === 1) return { ok: true, made: reservation.id };
    if (holds) return { ok: false, reason: 'changed' };
    // Another call took a slot (or this call's reservation appeared) in between: decide again.
    doc = await accounts.findOne({ _id: doc._id, account_tag: doc.account_tag });
  }
  return { ok: false, reason: Reasons.BUSY };
}

/**
 * A retried authorization's reservation: its new time, and its new hold when it holds money, that one
 * conditional on the account being as read (`rev`): the hold was sized on that reading. False when nothing
 * was renewed.
 */
async function renew(
  accounts: Collections['accounts'],
  account: AccountDoc,
  id: string,
  until: Date,
  hold: bigint | null,
): Promise<boolean> {
  const renewed = await accounts.updateOne(
    {
      account_tag: account.account_tag,
      running_transactions: { $elemMatch: { id, reserved_until: { $ne: null } } },
      ...(hold !== null ? { rev: account.rev ?? { $exists: false } } : {}),
    },
    {
      $set: {
        'running_transactions.$[r].reserved_until': until,
        ...(hold !== null ? { 'running_transactions.$[r].hold': hold } : {}),
      },
      $inc: { rev: 1 },
    },
    { arrayFilters: [{ 'r.id': id }] },
  );
  return renewed.modifiedCount === 1;
}

/**
 * Begin taking over its call's reservation: the entry replaces it in place (same slot), conditional on
 * it still being a reservation and, for a prepaid balance check, on the account being unchanged (`rev`).
 * False when the account changed in between: the caller re-reads and decides again.
 */
export async function takeOverReservation(
  deps: TransactionDeps,
  account: AccountDoc,
  reservationId: string,
  entry: RunningTransaction,
  checkRev: boolean,
  /** More conditions on the account (a deciding begin's fence: begin.ts). */
  extra: Record<string, unknown> = {},
): Promise<boolean> {
  // Only while it holds its slot and hold: expired, other calls may have taken them (begin then decides afresh).
  const filter: Record<string, unknown> = {
    _id: account._id,
    account_tag: account.account_tag,
    running_transactions: { $elemMatch: { id: reservationId, reserved_until: { $ne: null, $gt: new Date() } } },
    ...extra,
  };
  if (checkRev) filter.rev = account.rev ?? { $exists: false };
  const result = await deps.ctx.mongo.collections.accounts.updateOne(
    filter,
    { $set: { 'running_transactions.$[r]': entry }, $inc: { rev: 1 } },
    { arrayFilters: [{ 'r.id': reservationId }] },
  );
  return result.modifiedCount === 1;
}

/**
 * Puts a call's reservation back in the place of the entry a begin made from it (the begin undone:
 * refused by another party, or abandoned), keeping its slot and hold until it expires as it would have.
 */
export async function restoreReservation(
  accounts: Collections['accounts'],
  accountTag: string,
  entryId: string,
  reservation: RunningTransaction,
): Promise<void> {
  await accounts.updateOne(
    { account_tag: accountTag, 'running_transactions.id': entryId },
    { $set: { 'running_transactions.$[r]': reservation }, $inc: { rev: 1 } },
    { arrayFilters: [{ 'r.id': entryId }] },
  );
}

/** Removes every reservation past its time, across accounts (the maintenance pass, off the hot path). */
export async function sweepExpiredReservations(accounts: Collections['accounts'], now: Date = new Date()): Promise<number> {
  const cursor = accounts.find<Pick<AccountDoc, 'account_tag' | 'running_transactions'>>(
    { 'running_transactions.reserved_until': { $lte: now } },
    { projection: { _id: 0, account_tag: 1, running_transactions: 1 } },
  );
  let removed = 0;
  for await (const account of cursor) removed += await dropExpired(accounts, account, now);
  return removed;
}

/**
 * Releases the call's reservations on the accounts that hold one: a recorded call (recordTransaction
 * after authorization, a proxy in CDR mode) needs no slot any more. An account holds at most one entry
 * per call, so the filter (that entry is a reservation) makes pulling by call id safe.
 */
export async function releaseReservations(accounts: Collections['accounts'], holders: readonly string[], call: string): Promise<void> {
  await Promise.all(
    holders.map((tag) =>
      accounts.updateOne(
        { account_tag: tag, running_transactions: { $elemMatch: { call_id: call, reserved_until: { $ne: null } } } },
        { $pull: { running_transactions: { call_id: call } }, $inc: { rev: 1 } },
      ),
    ),
  );
}
