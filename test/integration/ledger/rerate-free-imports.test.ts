import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { importBatchId, newSettlementId, settleImportBatches } from '../../../src/shared/domain/ledger';
import { announceRatingDataChange, RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { startRerating, type RerateSelection } from '../../../src/shared/domain/rerating';
import { processImportBatch } from '../../../src/workers/imports/batch';
import { processRerateBatch } from '../../../src/workers/rerating/batch';
import { rollback } from '../../../src/workers/transactions/rollback';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { importLine } from '../import/support';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * The commonest rerating there is: a destination priced 0 by mistake, its calls imported free, then
 * rated again at the right price. An account whose whole share of an import batch was 0 had no debit
 * entry for that batch, so its records looked never charged: rerating skipped them (the revenue lost
 * for good, counted "skipped") and a rollback could not tell. Its share is now debited as it is, 0.
 */
describe('rerating imported calls that were free', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const window: RerateSelection = {
    from: new Date(Date.UTC(2026, 0, 1)),
    to: new Date(Date.UTC(2026, 0, 2)),
    account_tags: ['file', 'agent'],
    pricelist_tag: null,
    carrier_tag: null,
    prefix: null,
  };
  const balance = async (tag: string) => (await ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.balance;
  const fees = async (tag: string) =>
    (await ctx.mongo.collections.transactions.find({ account_tag: tag }).sort({ transaction_tag: 1 }).toArray()).map((r) => r.fee);
  const lines = (tag: string, first: number) => [
    importLine(first, `${tag}-${first}`, tag, 30),
    importLine(first + 1, `${tag}-${first + 1}`, tag, 45),
  ];

  beforeAll(async () => {
    ctx = await createTestContext();
    const free = perSecondRating('49', 0);
    free.rates[0].rate = 0;
    await seed(ctx, {
      ...free,
      accounts: [
        account('file', { balance: 1000n }),
        account('agent', { balance: 1000n }),
        account('receiver', { balance: 0n }),
        account('dialer', { balance: 1000n }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('a file batch and an agent batch of free calls, rated again at 60 a minute: every record charged once, the audit exact', async () => {
    // A file import: the batch leaves its totals to a settlement.
    expect(await processImportBatch(deps, { import_id: 'free-file', batch: 0, lines: lines('file', 0), deadline: null }, 1)).toMatchObject({
      rated: 2,
      charged: '0',
    });
    await settleImportBatches(ctx.mongo.collections, ctx.mongo.db, newSettlementId('free-file'), 'free-file', [
      importBatchId('free-file', 0),
    ]);
    // recordTransactions (the agent's batch): debited at once.
    expect(
      await processImportBatch(deps, { import_id: 'free-agent', batch: 0, lines: lines('agent', 0), deadline: Date.now() + 10_000 }, 1),
    ).toMatchObject({ rated: 2, charged: '0' });
    expect([await fees('file'), await fees('agent')]).toEqual([
      [0n, 0n],
      [0n, 0n],
    ]);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);

    await ctx.mongo.collections.rates.updateMany({}, { $set: { rate: 60 } });
    await announceRatingDataChange(ctx);
    rating.invalidate();
    const started = await startRerating(ctx.mongo.collections, ctx.queues.imports, window, { batchSize: 3 });
    let done = null;
    for (let batch = 0; batch < 10 && !done; batch++) {
      await processRerateBatch(deps, { rerating_id: started._id, batch });
      const doc = await ctx.mongo.collections.reratings.findOne({ _id: started._id });
      if (doc!.state === 'done') done = doc;
    }
    expect(done).toMatchObject({ counts: { seen: 4, changed: 4, unchanged: 0, skipped: 0 }, difference: 150n });
    expect([await fees('file'), await fees('agent')]).toEqual([
      [30n, 45n],
      [30n, 45n],
    ]);
    expect([await balance('file'), await balance('agent')]).toEqual([925n, 925n]);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);

    // A rollback of one of them gives back what the rerating charged, once.
    const jobs = callJobs(Date.UTC(2026, 0, 1, 12));
    const job = jobs.rollback('file-1', 'file');
    expect(await rollback(deps, job, { id: 'rollback-file-1', deadline: job.deadline })).toMatchObject({ ok: true });
    expect(await balance('file')).toBe(970n);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });

  it("an inbound receiver's share (always 0) is proven by its entry alone: the receiver's account is not written", async () => {
    const before = (await ctx.mongo.collections.accounts.findOne({ account_tag: 'receiver' }))!;
    const inbound = lines('dialer', 10).map((l) => ({ ...l, destination_account_tag: 'receiver' }));
    expect(
      await processImportBatch(deps, { import_id: 'inbound', batch: 0, lines: inbound, deadline: Date.now() + 10_000 }, 1),
    ).toMatchObject({
      rated: 2,
    });
    await processImportBatch(
      deps,
      {
        import_id: 'inbound-file',
        batch: 0,
        lines: lines('dialer', 20).map((l) => ({ ...l, destination_account_tag: 'receiver' })),
        deadline: null,
      },
      1,
    );
    await settleImportBatches(ctx.mongo.collections, ctx.mongo.db, newSettlementId('inbound-file'), 'inbound-file', [
      importBatchId('inbound-file', 0),
    ]);
    expect(await ctx.mongo.collections.transactions.countDocuments({ account_tag: 'receiver' })).toBe(4);
    const entries = await ctx.mongo.collections.ledger.find({ account_tag: 'receiver' }).toArray();
    expect(entries.map((e) => [e.kind, e.amount])).toEqual([
      ['import', 0n],
      ['import', 0n],
    ]);
    const after = (await ctx.mongo.collections.accounts.findOne({ account_tag: 'receiver' }))!;
    expect([after.rev, after.ledger_rev ?? null, after.import_marker ?? null]).toEqual([
      before.rev,
      before.ledger_rev ?? null,
      before.import_marker ?? null,
    ]);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });
});
