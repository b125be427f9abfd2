import { type AnyBulkWriteOperation, type Db, type Filter, type UpdateFilter } from 'mongodb';
import { chunks } from '../../infra/chunks';
import type { AccountDoc } from '../types';
import { bulkRefusals, isDuplicateKeyError } from '../../infra/mongo-errors';
import { importBatchesOf } from './batches';
import { entryOf, markerOf, opIds, type LedgerEntryDoc, type LedgerMarker } from './model';
import type { LedgerStore } from './store';

/** Rounds of conflicts (the account's balance changed between read and write) before the batch fails and is retried. */
const MAX_ROUNDS = 50;

/** Where one account stands with one batch debit. */
export interface BatchDebitStateOf {
  /** `ledger_rev` as read; the debit is conditional on it. */
  ledgerRev: number | null;
  /** The account's import marker slot as read (`import_marker`): the last batch debit applied to it. */
  slot: LedgerMarker | null;
  /** This batch's debit is applied (its marker is in the slot, or its ledger entry exists). */
  applied: boolean;
}

/** The fields of an account a batch debit reads. */
export const BATCH_DEBIT_PROJECTION = { _id: 0, account_tag: 1, ledger_rev: 1, import_marker: 1 } as const;

/** The state of one account for this batch's debit, from an account read before the ledger was checked. */
export function debitStateOf(account: Pick<AccountDoc, 'ledger_rev' | 'import_marker'>, op: string, settled = false): BatchDebitStateOf {
  const slot = account.import_marker ?? null;
  return { ledgerRev: account.ledger_rev ?? null, slot, applied: settled || slot?.op === op };
}

/**
 * Reads, for each account, the `ledger_rev` and its import marker slot, and then (in that order, as
 * applyOnce does) which ledger entries of the batch exist.
 */
export async function readBatchDebits(store: LedgerStore, batchId: string, tags: string[]): Promise<Map<string, BatchDebitStateOf>> {
  const docs = await Promise.all(
    chunks(tags).map((part) => store.accounts.find({ account_tag: { $in: part } }, { projection: BATCH_DEBIT_PROJECTION }).toArray()),
  );
  const settled = await existingEntries(
    store,
    tags.map((tag) => ({ tag, op: opIds.importDebit(batchId, tag) })),
  );
  const state = new Map<string, BatchDebitStateOf>();
  for (const doc of docs.flat()) {
    const op = opIds.importDebit(batchId, doc.account_tag);
    state.set(doc.account_tag, debitStateOf(doc, op, settled.has(op)));
  }
  return state;
}

/** Which of these entries exist. An entry's account is known with its id: the filter carries the shard key (docs/SCALING.md). */
async function existingEntries(store: LedgerStore, wanted: Array<{ tag: string; op: string }>): Promise<Set<string>> {
  const found = await Promise.all(
    chunks(wanted).map((part) =>
      store.ledger
        .find(
          { _id: { $in: part.map((w) => w.op) }, account_tag: { $in: [...new Set(part.map((w) => w.tag))] } },
          { projection: { _id: 1 } },
        )
        .toArray(),
    ),
  );
  return new Set(found.flat().map((e) => e._id));
}

/**
 * Applies each account's total for a batch once (ledger `import:<batch>:<account>`).
 *
 * Batch debits touch hundreds of accounts each, so they keep their marker in one slot per account
 * (`import_marker`) instead of the `ledger_pending` list: the debit overwrites the slot in the same
 * atomic update, and nothing removes it afterwards. The slot is only ever overwritten by a debit that
 * first made sure the marker it replaces is settled (its ledger entry written, from the marker itself),
 * and that write is conditional on the account's `ledger_rev` as read with the slot (compare-and-swap,
 * as applyOnce): the proof of a debit is never lost, and each account costs one update per batch.
 *
 * `initial` must say, for each account, the `ledger_rev` (and slot) at which the debit was known not to
 * be applied: read by readBatchDebits, or the account read made before the batch was first claimed
 * (nobody could apply a debit of an unclaimed batch). Accounts whose write missed are read again and
 * retried. Then the batch's ledger entries are written.
 */
export async function applyBatchDebits(
  store: LedgerStore,
  db: Db,
  batchId: string,
  debits: ReadonlyMap<string, bigint>,
  initial: ReadonlyMap<string, BatchDebitStateOf>,
  lap: (phase: string) => void = () => {},
  /** A settlement's: per account, the batches its total charges (kept in the marker and the entry). */
  covers?: ReadonlyMap<string, string[]>,
): Promise<{ conflicts: number }> {
  let conflicts = 0;
  let state: ReadonlyMap<string, BatchDebitStateOf> = initial;
  const ours = new Map<string, LedgerMarker>();
  // A total of 0 (free calls; an inbound receiver's share, always 0) moves no balance: its entry alone
  // proves the batch's records of that account charged (a rerating at a corrected price then charges
  // them, docs/RERATING.md), written without touching the account, so a busy receiver's live calls never
  // race a batch for its compare-and-swap.
  const free = [...debits]
    .filter(([, total]) => total === 0n)
    .map(([tag]) => ({ tag, marker: markerFor(batchId, tag, 0n, covers?.get(tag)) }));
  await settleEntries(store, free, false);
  let pending = [...debits.keys()].filter((tag) => debits.get(tag) !== 0n);
  for (let round = 0; ; round++) {
    for (const tag of pending) {
      const s = state.get(tag);
      if (s?.applied)
        ours.set(
          tag,
          s.slot?.op === opIds.importDebit(batchId, tag) ? s.slot : markerFor(batchId, tag, debits.get(tag)!, covers?.get(tag)),
        );
    }
    // A missing account (deleted since it was read) has nothing to debit.
    pending = pending.filter((tag) => state.has(tag) && !state.get(tag)!.applied);
    if (pending.length === 0) break;
    if (round >= MAX_ROUNDS) throw new Error(`debits of ${batchId}: balances kept changing for ${MAX_ROUNDS} rounds`);
    // The markers these debits will overwrite: settled first.
    await settleImportSlots(
      store,
      db,
      pending.flatMap((tag) => {
        const slot = state.get(tag)!.slot;
        return slot ? [{ tag, marker: slot }] : [];
      }),
    );
    lap('debit_settle_previous');
    const markers = new Map(pending.map((tag) => [tag, markerFor(batchId, tag, debits.get(tag)!, covers?.get(tag))]));
    const ops: AnyBulkWriteOperation<AccountDoc>[] = pending.map((tag) => ({
      updateOne: {
        // `ledger_rev: null` also matches an account never changed (no field yet), and stays an exact key.
        filter: { account_tag: tag, ledger_rev: state.get(tag)!.ledgerRev } as Filter<AccountDoc>,
        update: {
          $inc: { balance: markers.get(tag)!.amount, rev: 1, ledger_rev: 1 },
          $set: { import_marker: markers.get(tag)! },
        } as UpdateFilter<AccountDoc>,
      },
    }));
    const result = await store.accounts.bulkWrite(ops, { ordered: false });
    lap('debit_update');
    conflicts += ops.length - result.modifiedCount;
    if (result.modifiedCount === ops.length) {
      for (const [tag, marker] of markers) ours.set(tag, marker);
      break;
    }
    state = await readBatchDebits(store, batchId, pending);
    lap('debit_reread');
  }
  await settleEntries(
    store,
    [...ours].map(([tag, marker]) => ({ tag, marker })),
    false,
  );
  lap('debit_ledger_entries');
  return { conflicts };
}

/**
 * Settles import slot markers (those a debit is about to overwrite, or stale ones for the recovery
 * sweep); returns how many ledger entries it had to write. Almost always a marker's batch wrote its
 * entries itself and said so on its document (`debits_settled`: one read for the few hundred batches
 * the slots name, instead of a look-up per account); only the markers of other batches (one that
 * crashed between its debits and its entries, or whose document is gone) are looked up and written.
 */
export async function settleImportSlots(
  store: LedgerStore,
  db: Db,
  markers: Array<{ tag: string; marker: LedgerMarker }>,
): Promise<number> {
  const batches = [...new Set(markers.flatMap((m) => (m.marker.ref ? [m.marker.ref] : [])))];
  // By `_id` alone, which every server answers from its index; the flag is read, not matched.
  const read = await Promise.all(
    chunks(batches).map((part) =>
      importBatchesOf(db)
        .find({ _id: { $in: part } }, { projection: { _id: 1, debits_settled: 1 } })
        .toArray(),
    ),
  );
  const done = new Set(read.flat().flatMap((b) => (b.debits_settled ? [b._id] : [])));
  return settleEntries(
    store,
    markers.filter((m) => !m.marker.ref || !done.has(m.marker.ref)),
    true,
  );
}

function markerFor(batchId: string, tag: string, total: bigint, batches?: string[]): LedgerMarker {
  return markerOf({
    op: opIds.importDebit(batchId, tag),
    account_tag: tag,
    amount: -total,
    kind: 'import',
    transaction_tag: null,
    ref: batchId,
    ...(batches ? { batches } : {}),
  });
}

/**
 * Writes the ledger entries of these markers (a duplicate means it was written already). `lookFirst`:
 * most are expected to exist (markers about to be overwritten), so they are looked up before writing.
 */
async function settleEntries(
  store: LedgerStore,
  markers: Array<{ tag: string; marker: LedgerMarker }>,
  lookFirst: boolean,
): Promise<number> {
  if (markers.length === 0) return 0;
  const existing = lookFirst
    ? await existingEntries(
        store,
        markers.map((m) => ({ tag: m.tag, op: m.marker.op })),
      )
    : new Set<string>();
  const entries: LedgerEntryDoc[] = markers.filter((m) => !existing.has(m.marker.op)).map(({ tag, marker }) => entryOf(tag, marker));
  if (entries.length === 0) return 0;
  try {
    await store.ledger.insertMany(entries, { ordered: false });
    return entries.length;
  } catch (err) {
    const refusals = bulkRefusals(err);
    if (refusals.some((e) => !isDuplicateKeyError(e))) throw err;
    return entries.length - refusals.length;
  }
}
