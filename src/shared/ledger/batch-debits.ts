import type { AnyBulkWriteOperation, Filter, UpdateFilter } from 'mongodb';
import { chunks } from '../chunks';
import type { AccountDoc } from '../domain/types';
import { isDuplicateKeyError } from '../mongo';
import { MongoBulkWriteError } from 'mongodb';
import { markerOf } from './apply';
import type { LedgerMarker } from './model';
import { opIds } from './model';
import type { LedgerStore } from './store';

/** Rounds of conflicts (the account's balance changed between read and write) before the batch fails and is retried. */
const MAX_ROUNDS = 50;
const IN_CHUNK = 200;

/** Where one account stands with one batch debit. */
export interface BatchDebitStateOf {
  /** `ledger_rev` as read; the debit is conditional on it. */
  ledgerRev: number | null;
  /** The debit's marker, when it was applied and not settled yet. */
  marker?: LedgerMarker;
  /** Its ledger entry exists: applied and settled. */
  settled: boolean;
}

/**
 * Reads, for each account, the `ledger_rev` and the batch debit's marker, and then (in that order, as
 * applyOnce does) which ledger entries of the batch exist.
 */
export async function readBatchDebits(store: LedgerStore, batchId: string, tags: string[]): Promise<Map<string, BatchDebitStateOf>> {
  const state = new Map<string, BatchDebitStateOf>();
  const docs = await Promise.all(
    chunks(tags, IN_CHUNK).map((part) =>
      store.accounts.find({ account_tag: { $in: part } }, { projection: { _id: 0, account_tag: 1, ledger_rev: 1, ledger_pending: 1 } }).toArray(),
    ),
  );
  for (const doc of docs.flat()) {
    const op = opIds.importDebit(batchId, doc.account_tag);
    state.set(doc.account_tag, { ledgerRev: doc.ledger_rev ?? null, marker: doc.ledger_pending?.find((m) => m.op === op), settled: false });
  }
  const ids = [...state.keys()].map((tag) => opIds.importDebit(batchId, tag));
  const entries = await Promise.all(
    chunks(ids, IN_CHUNK).map((part) => store.ledger.find({ _id: { $in: part } }, { projection: { _id: 1, account_tag: 1 } }).toArray()),
  );
  for (const entry of entries.flat()) {
    const s = state.get(entry.account_tag);
    if (s) s.settled = true;
  }
  return state;
}

/**
 * Applies each account's total for a batch once (ledger `import:<batch>:<account>`): one atomic update
 * per account, conditional on its `ledger_rev` (compare-and-swap, as applyOnce), all in one unordered
 * bulk write. `initial` must say, for each account, the `ledger_rev` at which the debit was known not
 * to be applied: read by readBatchDebits, or the account read made before the batch was first claimed
 * (nobody could apply a debit of an unclaimed batch). Accounts whose write missed are read again and
 * retried. Then the ledger entries are written and the markers removed.
 */
export async function applyBatchDebits(
  store: LedgerStore,
  batchId: string,
  debits: ReadonlyMap<string, bigint>,
  initial: ReadonlyMap<string, BatchDebitStateOf>,
): Promise<void> {
  let state: ReadonlyMap<string, BatchDebitStateOf> = initial;
  const toSettle = new Map<string, LedgerMarker>();
  let pending = [...debits.keys()];
  for (let round = 0; ; round++) {
    for (const tag of pending) {
      const marker = state.get(tag)?.marker;
      if (marker) toSettle.set(tag, marker);
    }
    // A missing account (deleted since it was read) has nothing to debit.
    pending = pending.filter((tag) => state.has(tag) && !state.get(tag)!.marker && !state.get(tag)!.settled);
    if (pending.length === 0) break;
    if (round >= MAX_ROUNDS) throw new Error(`debits of ${batchId}: balances kept changing for ${MAX_ROUNDS} rounds`);
    const markers = new Map(
      pending.map((tag) => [
        tag,
        markerOf({ op: opIds.importDebit(batchId, tag), account_tag: tag, amount: -debits.get(tag)!, kind: 'import', transaction_tag: null, ref: batchId }),
      ]),
    );
    const ops: AnyBulkWriteOperation<AccountDoc>[] = pending.map((tag) => ({
      updateOne: {
        // `ledger_rev: null` also matches an account never changed (no field yet), and stays an exact key.
        filter: { account_tag: tag, ledger_rev: state.get(tag)!.ledgerRev } as Filter<AccountDoc>,
        update: {
          $inc: { balance: markers.get(tag)!.amount, rev: 1, ledger_rev: 1 },
          $push: { ledger_pending: markers.get(tag)! },
        } as UpdateFilter<AccountDoc>,
      },
    }));
    const result = await store.accounts.bulkWrite(ops, { ordered: false });
    if (result.modifiedCount === ops.length) {
      for (const [tag, marker] of markers) toSettle.set(tag, marker);
      break;
    }
    state = await readBatchDebits(store, batchId, pending);
  }
  await settleMany(store, toSettle);
}

/** settle() for many accounts: the ledger entries in one unordered insert, then the markers removed. */
async function settleMany(store: LedgerStore, markers: ReadonlyMap<string, LedgerMarker>): Promise<void> {
  if (markers.size === 0) return;
  const entries = [...markers].map(([tag, m]) => ({
    _id: m.op,
    account_tag: tag,
    amount: m.amount,
    kind: m.kind,
    transaction_tag: m.transaction_tag,
    ref: m.ref,
    at: m.at,
  }));
  try {
    await store.ledger.insertMany(entries, { ordered: false });
  } catch (err) {
    const errors = err instanceof MongoBulkWriteError ? (Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors]) : [];
    if (errors.length === 0 || errors.some((e) => !isDuplicateKeyError({ code: e.code }))) throw err;
  }
  await store.accounts.bulkWrite(
    [...markers].map(([tag, m]) => ({
      updateOne: { filter: { account_tag: tag }, update: { $pull: { ledger_pending: { op: m.op } } } as UpdateFilter<AccountDoc> },
    })),
    { ordered: false },
  );
}
