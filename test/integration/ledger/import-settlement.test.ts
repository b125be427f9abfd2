import type { Collection } from 'mongodb';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import {
  applyBatchDebits,
  batchDebitState,
  claimBatch,
  importBatchId,
  newSettlementId,
  opIds,
  readBatchDebits,
  settleImportBatches,
  storeDeferredBatchResult,
  type LedgerStore,
} from '../../../src/shared/domain/ledger';
import type { AccountDoc } from '../../../src/shared/domain/types';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { recoverInterrupted, takeoverAfterMs } from '../../../src/workers/maintenance/recover';
import { loadAccounts } from '../../../src/workers/imports/accounts';
import { processImportBatch } from '../../../src/workers/imports/batch';
import { planBatch } from '../../../src/workers/imports/plan';
import { insertRecords } from '../../../src/workers/imports/store';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { createTestContext, TestContext } from '../../support/harness';
import { importLine } from '../import/support';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * Issue 12, imports: a file batch leaves its per-account totals to a settlement, which debits each
 * account once for many batches (src/shared/domain/ledger/settlements.ts). Each case uses its own accounts,
 * so the balances it checks are its own.
 */
describe('settlements of file import batches', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const balance = async (tag: string) => (await ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.balance;
  const importDebits = (tag: string) => ctx.mongo.collections.ledger.countDocuments({ account_tag: tag, kind: 'import' });
  const batchDoc = (id: string) => ctx.mongo.collections.importBatches.findOne({ _id: id });
  const line = (n: number, accountTag: string, seconds: number) => importLine(n, `${accountTag}-${n}`, accountTag, seconds);
  /** Runs batch `n` of an import through the worker's code: `lines` lines of `seconds` each on `tag`. */
  const runBatch = (importId: string, n: number, tag: string, seconds: number, timestamp = 1) =>
    processImportBatch(
      deps,
      { import_id: importId, batch: n, lines: [line(n * 10, tag, seconds), line(n * 10 + 1, tag, seconds)], deadline: null },
      timestamp,
    );
  const audit = async () => auditLedger(ctx.mongo.collections);

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating('49', 0),
      accounts: ['a', 'b', 'c', 'd', 'e', 'f'].flatMap((t) => [
        account(t, { balance: 1000n, linked_accounts: [`${t}-parent`] }),
        account(`${t}-parent`, { balance: 1000n }),
      ]),
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('a file batch stores its totals; one settlement debits each account once for all the batches', async () => {
    const ids = [0, 1, 2, 3].map((n) => importBatchId('one', n));
    for (const n of [0, 1, 2, 3])
      expect(await runBatch('one', n, 'a', n + 1)).toMatchObject({
        rated: 2,
        charged: String(2 * (n + 1)),
        charged_linked: String(2 * (n + 1)),
      });
    // Rated and recorded, not charged yet: balances, ledger and records agree.
    expect([await balance('a'), await balance('a-parent')]).toEqual([1000n, 1000n]);
    expect(await batchDebitState(ctx.mongo.db, ids[0])).toEqual({ state: 'settling' });
    expect((await audit()).differences).toEqual([]);

    const id = newSettlementId('one');
    expect(await settleImportBatches(ctx.mongo.collections, ctx.mongo.db, id, 'one', ids)).toEqual({
      settlement_id: id,
      batches: 4,
      accounts: 2,
    });
    expect([await balance('a'), await balance('a-parent')]).toEqual([980n, 980n]);
    expect([await importDebits('a'), await importDebits('a-parent')]).toEqual([1, 1]);
    const entry = await ctx.mongo.collections.ledger.findOne({ _id: opIds.importDebit(id, 'a') });
    expect(entry).toMatchObject({ amount: -20n, kind: 'import', ref: id });
    // The entry names the batches it charges: the ledger alone proves their records charged.
    expect([...entry!.batches!].sort()).toEqual([...ids].sort());
    expect(await batchDebitState(ctx.mongo.db, ids[3])).toEqual({ state: 'done', debitedBy: id });
    expect(await audit()).toMatchObject({ pending_markers: 0, differences: [] });
  });

  it('a settlement retried, or run twice at once, debits once; a batch another settlement took stays with it', async () => {
    const ids = [0, 1].map((n) => importBatchId('twice', n));
    for (const n of [0, 1]) await runBatch('twice', n, 'b', 5);
    const id = newSettlementId('twice');
    const settle = () => settleImportBatches(ctx.mongo.collections, ctx.mongo.db, id, 'twice', ids);
    await Promise.all([settle(), settle()]);
    expect(await settle()).toMatchObject({ batches: 2, accounts: 2 });
    expect([await balance('b'), await balance('b-parent')]).toEqual([980n, 980n]);
    // Another settlement sent for the same batches (a rerun of the import) finds nothing to settle.
    expect(await settleImportBatches(ctx.mongo.collections, ctx.mongo.db, newSettlementId('twice'), 'twice', ids)).toMatchObject({
      batches: 0,
      accounts: 0,
    });
    // Neither does a batch executed again (a rerun): its result stands, it is not put back to settle.
    expect(await runBatch('twice', 0, 'b', 5, 2)).toMatchObject({ replayed: true });
    await storeDeferredBatchResult(
      ctx.mongo.db,
      ids[1],
      3,
      { batch_id: ids[1], lines: 2, rated: 2, duplicate_lines: [], refused: [], charged: '10', charged_linked: '10', replayed: false },
      [{ account_tag: 'b', amount: 10n }],
    );
    expect(await batchDoc(ids[1])).toMatchObject({ settled_by: id, job_timestamp: 1 });
    expect((await batchDoc(ids[1]))!.settle_pending).toBeUndefined();
    expect([await balance('b'), await balance('b-parent'), await importDebits('b')]).toEqual([980n, 980n, 1]);
    expect((await audit()).differences).toEqual([]);
  });

  it('the recovery sweep settles batches whose importer stopped, and finishes a settlement that stopped after its claim', async () => {
    for (const n of [0, 1]) await runBatch('left', n, 'c', 3);
    // A settlement of batch 1 killed after claiming it, before any debit.
    const stalled = newSettlementId('left');
    const dying: LedgerStore = { ...ctx.mongo.collections, accounts: failingOn(ctx.mongo.collections.accounts, 'bulkWrite') };
    await expect(settleImportBatches(dying, ctx.mongo.db, stalled, 'left', [importBatchId('left', 1)])).rejects.toThrow('killed');
    expect(await batchDoc(importBatchId('left', 1))).toMatchObject({ settled_by: stalled });
    expect([await balance('c'), await balance('c-parent')]).toEqual([1000n, 1000n]);

    // Not before the takeover time: a live importer settles its own.
    expect((await recoverInterrupted(deps)).batchesSettled).toBe(0);
    const swept = await recoverInterrupted(deps, new Date(Date.now() + takeoverAfterMs(deps) + 60_000));
    expect(swept.batchesSettled).toBe(2);
    expect([await balance('c'), await balance('c-parent')]).toEqual([988n, 988n]);
    expect(await ctx.mongo.collections.importBatches.countDocuments({ settle_pending: true })).toBe(0);
    expect(await audit()).toMatchObject({ pending_markers: 0, differences: [] });
  });

  it('a batch that an earlier version started debiting itself finishes its own debits, and is not left to a settlement', async () => {
    const lines = [line(0, 'd', 4), line(1, 'd', 6)];
    const batchId = importBatchId('legacy', 0);
    // The earlier version's crash point: claimed, records written, the caller debited, its parent not yet.
    const accounts = await loadAccounts(ctx.mongo.collections.accounts, ['d']);
    expect(await claimBatch(ctx.mongo.db, batchId, 'legacy', 0)).toBe(true);
    const plans = planBatch(lines, accounts, await rating.index(), batchId);
    await insertRecords(
      ctx.mongo.collections.transactions,
      plans.flatMap((p) => (p.kind === 'planned' ? [p.caller, ...p.others].map((r) => r.doc) : [])),
    );
    await applyBatchDebits(
      ctx.mongo.collections,
      ctx.mongo.db,
      batchId,
      new Map([['d', 10n]]),
      await readBatchDebits(ctx.mongo.collections, batchId, ['d']),
    );

    expect(await processImportBatch(deps, { import_id: 'legacy', batch: 0, lines, deadline: null }, 7)).toMatchObject({
      rated: 2,
      charged: '10',
      charged_linked: '10',
    });
    expect([await balance('d'), await balance('d-parent')]).toEqual([990n, 990n]);
    expect(await batchDoc(batchId)).not.toHaveProperty('settle_pending');
    expect(await batchDebitState(ctx.mongo.db, batchId)).toEqual({ state: 'done', debitedBy: batchId });
    expect((await audit()).differences).toEqual([]);
  });

  it('settles batches of several sizes and accounts to the exact total', async () => {
    const ids: string[] = [];
    for (const [n, tag, seconds] of [
      [0, 'e', 1],
      [1, 'f', 2],
      [2, 'e', 3],
      [3, 'f', 4],
      [4, 'e', 5],
    ] as const) {
      await runBatch('mixed', n, tag, seconds);
      ids.push(importBatchId('mixed', n));
    }
    await settleImportBatches(ctx.mongo.collections, ctx.mongo.db, newSettlementId('mixed'), 'mixed', ids.slice(0, 2));
    await settleImportBatches(ctx.mongo.collections, ctx.mongo.db, newSettlementId('mixed'), 'mixed', ids);
    // e: 2 x (1 + 3 + 5) = 18, f: 2 x (2 + 4) = 12, the same on each parent.
    expect([await balance('e'), await balance('e-parent'), await balance('f'), await balance('f-parent')]).toEqual([
      982n,
      982n,
      988n,
      988n,
    ]);
    expect([await importDebits('e'), await importDebits('f')]).toEqual([2, 2]);
    expect(await audit()).toMatchObject({ pending_markers: 0, differences: [] });
  });
});

/** The collection, with one method failing as a process killed at that point would leave things. */
function failingOn(collection: Collection<AccountDoc>, method: 'bulkWrite'): Collection<AccountDoc> {
  return new Proxy(collection, {
    get(target, prop, receiver) {
      if (prop === method) return async () => Promise.reject(new Error('killed'));
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
