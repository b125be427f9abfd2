import { announceChange } from '../../../src/shared/infra/announced-version';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { createApiStores } from '../../../src/api/store';
import { ImportAccountCache } from '../../../src/workers/imports/account-cache';
import { processImportBatch } from '../../../src/workers/imports/batch';
import { importBatchId, newSettlementId, settleImportBatches } from '../../../src/shared/domain/ledger';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';
import { importLine } from './support';

/**
 * Issue 12: a worker keeps the accounts of a file import in memory between its batches
 * (src/workers/imports/account-cache.ts). A batch must still see what an operator changed: through
 * the API at once, by hand within the maximum age, and a new import always reads afresh.
 */
describe('accounts held for a file import', () => {
  let ctx: TestContext;
  let rating: RatingDataCache;
  let cache: ImportAccountCache;
  let deps: TransactionDeps;
  /** Batch numbers for retried checks, so every batch is new. */
  let attempt = 0;
  const accounts = () => ctx.mongo.collections.accounts;
  const runBatch = (importId: string, n: number, tag: string) =>
    processImportBatch(deps, { import_id: importId, batch: n, lines: [importLine(n, `${importId}-${n}`, tag, 10)], deadline: null }, 1);

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating('49', 0),
      accounts: [
        account('api', { balance: 1000n }),
        account('hand', { balance: 1000n }),
        account('parent', { balance: 1000n }),
        account('child', { balance: 1000n, linked_accounts: ['parent'] }),
        account('gone', { balance: 1000n }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    cache = await ImportAccountCache.start(ctx);
    deps = { ctx, rating, importAccounts: cache };
  });

  afterAll(async () => {
    await cache?.close();
    await rating?.close();
    await ctx?.destroy();
  });

  it('an account deactivated through the API is refused by the next batch of the running import', async () => {
    expect(await runBatch('i1', 0, 'api')).toMatchObject({ rated: 1, refused: [] });
    const stores = createApiStores(ctx, rating);
    await stores.accounts.update({ tag: 'api' }, { active: false });
    // The announcement reaches the worker's subscriber asynchronously, as it would another process.
    await waitFor(async () => (await runBatch('i1', 1 + attempt++, 'api')).rated === 0);
    expect(await runBatch('i1', 100, 'api')).toMatchObject({
      rated: 0,
      refused: [{ line: 100, reason: 'NOT_ACTIVE', account_tag: 'api' }],
    });
  });

  it('a change by hand is seen after an announcement, or by the next import', async () => {
    expect(await runBatch('i2', 0, 'hand')).toMatchObject({ rated: 1 });
    await accounts().updateOne({ account_tag: 'hand' }, { $set: { active: false } });
    // Within the running import, the worker's copy stands until an announcement or the maximum age...
    expect(await runBatch('i2', 1, 'hand')).toMatchObject({ rated: 1 });
    // ...but a new import reads the account again.
    expect(await runBatch('i3', 0, 'hand')).toMatchObject({ rated: 0, refused: [{ reason: 'NOT_ACTIVE' }] });
    await accounts().updateOne({ account_tag: 'hand' }, { $set: { active: true } });
    await announceChange(ctx, 'account-settings');
    await waitFor(async () => (await runBatch('i3', 1 + attempt++, 'hand')).rated === 1);
  });

  it('a copy older than the maximum age is read again; linked accounts come with their child', async () => {
    const young = new ImportAccountCache({ current: async () => 'v', close: async () => undefined }, 0);
    const held = await young.accountsFor(accounts(), 'i4', ['child']);
    expect([...held.keys()].sort()).toEqual(['child', 'parent']);
    await accounts().updateOne({ account_tag: 'parent' }, { $set: { active: false } });
    expect((await young.accountsFor(accounts(), 'i4', ['child'])).get('parent')).toMatchObject({ active: false });
  });

  it('an account deleted through the API is not found by the next batch, and one created later is', async () => {
    expect(await runBatch('i5', 0, 'gone')).toMatchObject({ rated: 1 });
    const stores = createApiStores(ctx, rating);
    // Not while the batch's debit of it waits for its settlement (docs/OPERATIONS.md, "Deleting accounts").
    await expect(stores.accounts.delete({ tag: 'gone' })).rejects.toThrow('an import batch that charges it is not settled yet');
    await settleImportBatches(ctx.mongo.collections, ctx.mongo.db, newSettlementId('i5'), 'i5', [importBatchId('i5', 0)]);
    await stores.accounts.delete({ tag: 'gone' });
    await waitFor(async () => (await runBatch('i5', 1 + attempt++, 'gone')).rated === 0);
    expect(await runBatch('i5', 200, 'gone')).toMatchObject({ refused: [{ reason: 'NOT_FOUND', account_tag: 'gone' }] });
    // Not found is never remembered: an account created mid-import is found by the next batch.
    expect(await runBatch('i5', 201, 'new')).toMatchObject({ refused: [{ reason: 'NOT_FOUND' }] });
    await seed(ctx, { accounts: [account('new', { balance: 1000n })] });
    expect(await runBatch('i5', 202, 'new')).toMatchObject({ rated: 1 });
  });

  /** Retries `check` (each a new batch number) until it holds, for at most 5 s. */
  async function waitFor(check: () => Promise<boolean>): Promise<void> {
    const until = Date.now() + 5000;
    while (!(await check())) {
      if (Date.now() > until) throw new Error('condition not met within 5 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  }
});
