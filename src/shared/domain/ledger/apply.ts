import type { Filter, UpdateFilter } from 'mongodb';
import type { AccountDoc } from '../types';
import { groupInsert, groupUpdate } from '../../infra/group-commands';
import type { LedgerStore } from './store';
import { entryOf, markerOf, type LedgerMarker, type LedgerOp } from './model';
import type { SettledMarkers } from './settled-markers';

/** Conflicting balance changes in a row before applyOnce gives up (the job fails and is retried). */
const MAX_ATTEMPTS = 200;

/** What the apply functions return of the account: everything but the (long) lists. */
const AFTER_PROJECTION = { running_transactions: 0, ledger_pending: 0 } as const;

/**
 * The one update that changes a balance: the amount, the marker, and the counters. `ledger_rev` counts
 * balance changes only (the compare-and-swap of applyOnce); `rev` counts every change of the account
 * (prepaid begins are conditional on it).
 */
function changeUpdate(marker: LedgerMarker, extra: UpdateFilter<AccountDoc> = {}): UpdateFilter<AccountDoc> {
  return {
    ...extra,
    $inc: { balance: marker.amount, rev: 1, ledger_rev: 1 },
    $push: { ledger_pending: marker },
  } as UpdateFilter<AccountDoc>;
}

/**
 * Writes the ledger entry a marker stands for; false when it exists already (someone else wrote it).
 * Grouped with the process's concurrent ledger writes into one command (src/shared/infra/group-commands.ts).
 */
export async function writeEntry(store: LedgerStore, accountTag: string, marker: LedgerMarker): Promise<boolean> {
  return (await groupInsert(store.ledger, entryOf(accountTag, marker))) === 'inserted';
}

/**
 * Writes the ledger entry a marker stands for (a duplicate means someone else wrote it) and then
 * removes the marker. Safe to repeat and to run from any process. Both writes are grouped with the
 * process's concurrent settles: the order (entry, then marker removal) holds for each marker.
 */
export async function settle(store: LedgerStore, accountTag: string, marker: LedgerMarker): Promise<void> {
  await writeEntry(store, accountTag, marker);
  await groupUpdate(store.accounts, { account_tag: accountTag }, {
    $pull: { ledger_pending: { op: marker.op } },
  } as UpdateFilter<AccountDoc>);
}

/**
 * Applies an operation whose precondition only it can consume: `guard` (added to the filter) must hold
 * before and never again after `update` (e.g. a running entry with a unique id, pulled by the same
 * write). No read is needed: the guard makes a second application impossible. Returns the account
 * after the change, or null when the guard did not hold (see wasApplied). `alongside` (marking the
 * record charged) runs beside the settling writes: the order between them does not matter.
 */
export async function applyGuarded(
  store: LedgerStore,
  op: LedgerOp,
  guard: Filter<AccountDoc>,
  update: UpdateFilter<AccountDoc>,
  alongside: () => Promise<void> = async () => undefined,
  /** Given, the marker's removal is left to the account's next write (settled-markers.ts). */
  settledMarkers?: SettledMarkers,
): Promise<AccountDoc | null> {
  const applied = await writeGuarded(store, op, guard, update);
  if (!applied) return null;
  await finishGuarded(store, op.account_tag, applied.marker, alongside, settledMarkers);
  return applied.account;
}

/**
 * applyGuarded's one write alone: the balance changed with its marker, or null when the guard did not
 * hold. The change is applied once it returns; its entry is written by finishGuarded, which a caller
 * may run later (an end that charges in its own write answers first: end-charge.ts), or by whoever
 * meets the marker (settle, wasApplied, the recovery sweep).
 */
export async function writeGuarded(
  store: LedgerStore,
  op: LedgerOp,
  guard: Filter<AccountDoc>,
  update: UpdateFilter<AccountDoc>,
): Promise<{ account: AccountDoc; marker: LedgerMarker } | null> {
  const marker = markerOf(op);
  const account = await store.accounts.findOneAndUpdate(
    { account_tag: op.account_tag, ...guard } as Filter<AccountDoc>,
    changeUpdate(marker, update),
    { returnDocument: 'after', projection: AFTER_PROJECTION },
  );
  return account ? { account, marker } : null;
}

/** The rest of applyGuarded after its write: the entry written, the marker removed (or left to the account's next write). */
export async function finishGuarded(
  store: LedgerStore,
  accountTag: string,
  marker: LedgerMarker,
  alongside: () => Promise<void> = async () => undefined,
  settledMarkers?: SettledMarkers,
): Promise<void> {
  const settling = settledMarkers
    ? writeEntry(store, accountTag, marker).then(() => settledMarkers.add(accountTag, marker.op))
    : settle(store, accountTag, marker);
  await Promise.all([settling, alongside()]);
}

/**
 * One compare-and-swap: applies the operation if the account's `ledger_rev` is still `ledgerRev`
 * (and `guard`, if given, holds), returning the account after it; null when it changed (nothing applied).
 * The caller must know the operation was not applied at `ledgerRev` (see applyOnce).
 */
export async function applyAt(
  store: LedgerStore,
  op: LedgerOp,
  ledgerRev: number | null,
  guard: Filter<AccountDoc> = {},
): Promise<AccountDoc | null> {
  const marker = markerOf(op);
  const updated = await store.accounts.findOneAndUpdate(
    { account_tag: op.account_tag, ledger_rev: ledgerRev, ...guard } as Filter<AccountDoc>,
    changeUpdate(marker),
    { returnDocument: 'after', projection: AFTER_PROJECTION },
  );
  if (updated) await settle(store, op.account_tag, marker);
  return updated;
}

export type ApplyOutcome =
  | { outcome: 'applied'; account: AccountDoc }
  /** Applied earlier (by a crashed attempt, a duplicate delivery, a concurrent worker). */
  | { outcome: 'already' }
  | { outcome: 'no-account' };

/**
 * Applies an operation at most once, ever. The account is read first, then the ledger: if neither holds
 * the operation (no marker, no entry), it was not applied at the `ledger_rev` read, and the write is
 * conditional on that `ledger_rev`. Any application in between bumps it, so the write misses and the
 * reads are made again. The order of the reads matters: a marker is removed only after its entry
 * exists, so an operation seen in neither place was not applied when the account was read.
 *
 * `freshAt` skips the reads: pass the `ledger_rev` read before the operation's intent (the record or
 * the claim its id derives from) was first written, by this caller. Nobody could apply it before that
 * read, so "not applied at freshAt" is already known.
 */
export async function applyOnce(store: LedgerStore, op: LedgerOp, freshAt?: number | null): Promise<ApplyOutcome> {
  let known = freshAt;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (known === undefined) {
      const state = await store.accounts.findOne(
        { account_tag: op.account_tag },
        { projection: { _id: 0, ledger_rev: 1, ledger_pending: 1 } },
      );
      if (!state) return { outcome: 'no-account' };
      const marker = state.ledger_pending?.find((m) => m.op === op.op);
      if (marker) {
        await settle(store, op.account_tag, marker);
        return { outcome: 'already' };
      }
      if (await store.ledger.findOne({ _id: op.op, account_tag: op.account_tag }, { projection: { _id: 1 } }))
        return { outcome: 'already' };
      known = state.ledger_rev ?? null;
    }
    const updated = await applyAt(store, op, known);
    if (updated) return { outcome: 'applied', account: updated };
    known = undefined;
    if (attempt > 2) await new Promise((resolve) => setTimeout(resolve, Math.min(attempt, 20)));
  }
  throw new Error(`ledger: balance of ${op.account_tag} kept changing; ${op.op} not applied yet (retry)`);
}

/**
 * Whether an operation changed the balance. Reads the account, then the ledger (the order applyOnce
 * relies on); a marker found is settled on the way. "false" is final only where nothing can still
 * apply the operation (its guard is gone, or its intent is being undone by the caller).
 */
export async function wasApplied(store: LedgerStore, accountTag: string, opId: string): Promise<boolean> {
  const state = await store.accounts.findOne({ account_tag: accountTag }, { projection: { _id: 0, ledger_pending: 1, import_marker: 1 } });
  const marker = state?.ledger_pending?.find((m) => m.op === opId);
  if (marker) {
    await settle(store, accountTag, marker);
    return true;
  }
  if (state?.import_marker?.op === opId) {
    // The slot keeps its marker after settling: write the entry if the batch never did.
    await writeEntry(store, accountTag, state.import_marker);
    return true;
  }
  return (await store.ledger.findOne({ _id: opId, account_tag: accountTag }, { projection: { _id: 1 } })) !== null;
}
