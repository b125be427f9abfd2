import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import {
  batchDebitState,
  claimBatch,
  importBatchesOf,
  importBatchId,
  newSettlementId,
  opIds,
  settleImportBatches,
} from '../../../src/shared/domain/ledger';
import { decideAbandoned } from '../../../src/shared/domain/calls/decisions';
import { recoverInterrupted, takeoverAfterMs } from '../../../src/workers/maintenance/recover';
import type { ImportLine } from '../../../src/shared/domain/queues/payloads';
import { announceRatingDataChange, RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { loadAccounts } from '../../../src/workers/imports/accounts';
import { processImportBatch } from '../../../src/workers/imports/batch';
import { planBatch } from '../../../src/workers/imports/plan';
import { insertRecords } from '../../../src/workers/imports/store';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { waitFor } from '../../support/agent-harness';
import { createTestContext, TestContext } from '../../support/harness';
import { importLine as line } from '../import/support';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * Issue 9, defects 4 and 9: an import batch retried after a crash charges what its stored records say,
 * never a fresh rating; an agent batch nobody was told about is taken back. The crash point (batch claimed, its records written, nothing debited) is set up with
 * the batch's own pieces, then the batch runs again after the rates or the accounts changed.
 */
describe('import batch retried after a crash', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const balance = async (tag: string) => (await ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.balance;

  /** The state a worker killed between writing a batch's records and debiting them leaves. */
  async function crashAfterRecords(importId: string, lines: ImportLine[], deadline: number | null = null): Promise<void> {
    const batchId = importBatchId(importId, 0);
    const accounts = await loadAccounts(
      ctx.mongo.collections.accounts,
      lines.map((l) => l.account_tag),
    );
    expect(await claimBatch(ctx.mongo.db, batchId, importId, 0, deadline)).toBe(true);
    const plans = planBatch(lines, accounts, await rating.index(), batchId);
    const docs = plans.flatMap((p) => (p.kind === 'planned' ? [p.caller, ...p.others].map((r) => r.doc) : []));
    expect(await insertRecords(ctx.mongo.collections.transactions, docs)).toEqual(new Set());
  }

  /** The settlement the importer sends once the batch is done (a file batch does not debit itself). */
  async function settle(importId: string): Promise<string> {
    const id = newSettlementId(importId);
    await settleImportBatches(ctx.mongo.collections, ctx.mongo.db, id, importId, [importBatchId(importId, 0)]);
    return id;
  }

  async function changeRate(value: number): Promise<void> {
    const before = await rating.index();
    await ctx.mongo.collections.rates.updateMany({}, { $set: { rate: value } });
    await announceRatingDataChange(ctx);
    await waitFor(async () => (await rating.index()) !== before, 'the new rates loaded');
  }

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating('49', 0),
      accounts: [account('a', { balance: 1000n, linked_accounts: ['p'] }), account('p', { balance: 1000n })],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('after a rate change, debits the stored fees', async () => {
    await crashAfterRecords('rates', [line(1, 'x1', 'a', 5), line(2, 'x2', 'a', 7)]);
    await changeRate(1200); // 20 per second: a fresh rating would charge 240 instead of 12
    const result = await processImportBatch(
      deps,
      { import_id: 'rates', batch: 0, lines: [line(1, 'x1', 'a', 5), line(2, 'x2', 'a', 7)], deadline: null },
      1,
    );
    expect(result).toMatchObject({ rated: 2, charged: '12', charged_linked: '12', refused: [] });
    await settle('rates');
    expect(await balance('a')).toBe(988n);
    expect(await balance('p')).toBe(988n);
    await changeRate(60);
  });

  it('after the parent was deactivated, still debits every record the batch wrote (which a rollback would refund)', async () => {
    await crashAfterRecords('deactivated', [line(1, 'y1', 'a', 10)]);
    await ctx.mongo.collections.accounts.updateOne({ account_tag: 'p' }, { $set: { active: false } });
    const result = await processImportBatch(
      deps,
      { import_id: 'deactivated', batch: 0, lines: [line(1, 'y1', 'a', 10)], deadline: null },
      1,
    );
    expect(result).toMatchObject({ rated: 1, charged: '10', charged_linked: '10', refused: [] });
    await settle('deactivated');
    expect(await balance('a')).toBe(978n);
    expect(await balance('p')).toBe(978n);
    await ctx.mongo.collections.accounts.updateOne({ account_tag: 'p' }, { $set: { active: true } });
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });

  it("keeps a settlement's debit provable in the account's import slot until the next debit settles it", async () => {
    const first = await processImportBatch(deps, { import_id: 'slot-1', batch: 0, lines: [line(0, 's1', 'a', 4)], deadline: null }, 4);
    expect(first).toMatchObject({ rated: 1, charged: '4' });
    const settlement = await settle('slot-1');
    // The crash point: debited (marker in the slot), ledger entry not written.
    const op = opIds.importDebit(settlement, 'a');
    expect((await ctx.mongo.collections.accounts.findOne({ account_tag: 'a' }))!.import_marker).toMatchObject({ op, amount: -4n });
    await ctx.mongo.collections.ledger.deleteOne({ _id: op });
    // Such a settlement never got to say its entries were written.
    await importBatchesOf(ctx.mongo.db).updateOne({ _id: settlement }, { $unset: { debits_settled: '' } });
    expect(await auditLedger(ctx.mongo.collections)).toMatchObject({ pending_markers: 1, differences: [] });
    // The next debit of the account settles it before putting its own marker in the slot.
    await processImportBatch(deps, { import_id: 'slot-2', batch: 0, lines: [line(0, 's2', 'a', 6)], deadline: null }, 5);
    await settle('slot-2');
    expect(await ctx.mongo.collections.ledger.findOne({ _id: op })).toMatchObject({ amount: -4n, account_tag: 'a' });
    expect(await auditLedger(ctx.mongo.collections)).toMatchObject({ pending_markers: 0, differences: [] });
  });

  it('defect 9: an agent batch whose job was lost is taken back by the sweep, and can be sent again', async () => {
    const before = [await balance('a'), await balance('p')];
    // recordTransactions: the batch's records written, its job lost with Redis, its caller answered TIMEOUT.
    await crashAfterRecords('api-lost', [line(0, 'z1', 'a', 10), line(1, 'z2', 'a', 20)], Date.now() + 1000);
    const swept = await recoverInterrupted(deps, new Date(Date.now() + takeoverAfterMs(deps) + 60_000));
    expect(swept.batchesUndone).toBe(1);
    expect(await ctx.mongo.collections.transactions.countDocuments({ transaction_tag: { $in: ['z1', 'z2'] } })).toBe(0);
    expect([await balance('a'), await balance('p')]).toEqual(before);
    expect(await batchDebitState(ctx.mongo.db, importBatchId('api-lost', 0))).toEqual({
      state: 'done',
      debitedBy: importBatchId('api-lost', 0),
    });
    // Sent again, the calls are recorded (not DUPLICATE_TRANSACTION).
    const again = await processImportBatch(
      deps,
      { import_id: 'api-again', batch: 0, lines: [line(0, 'z1', 'a', 10), line(1, 'z2', 'a', 20)], deadline: Date.now() + 10_000 },
      2,
    );
    expect(again).toMatchObject({ rated: 2, duplicate_lines: [], charged: '30' });
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });

  it('defect 9: an agent batch the agent gave up on is taken back by the worker that finishes it', async () => {
    const before = [await balance('a'), await balance('p')];
    const batchId = importBatchId('api-late', 0);
    await decideAbandoned(ctx.mongo.collections, { jobId: batchId, op: 'record-batch', account_tag: '', transaction_tag: '' });
    const late = await processImportBatch(
      deps,
      { import_id: 'api-late', batch: 0, lines: [line(0, 'w1', 'a', 10)], deadline: Date.now() + 10_000 },
      3,
    );
    expect(late).toMatchObject({ rated: 0, refused: [{ line: 0, reason: 'TIMEOUT' }] });
    expect(await ctx.mongo.collections.transactions.countDocuments({ transaction_tag: 'w1' })).toBe(0);
    expect([await balance('a'), await balance('p')]).toEqual(before);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });
});
