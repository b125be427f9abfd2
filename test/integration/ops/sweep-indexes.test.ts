import type { Document } from 'mongodb';
import { ensureIndexes } from '../../../src/shared/domain/store';
import { createTestContext, TestContext } from '../../support/harness';

/**
 * The recovery sweep runs once a minute (src/workers/maintenance/recover.ts). Two of its reads look for a
 * few documents in collections that grow with every call: records not yet charged or refunded, among
 * every record ever made, and rollbacks not yet carried out, among two decisions a call. On MongoDB each
 * needs an index that holds only what it looks for; without one, every minute reads the whole collection.
 * The embedded test server accepts and lists these indexes but does not plan with them, so what is
 * checked here is their definitions, and that an upgrade replaces the full index they supersede.
 */
describe('the recovery sweep reads through partial indexes', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestContext();
  });

  afterAll(async () => {
    await ctx?.destroy();
  });

  const indexes = async (name: 'transactions' | 'outcomes'): Promise<Document[]> => ctx.mongo.collections[name].indexes();

  it('records: an index on state that holds pending and rolling_back records only', async () => {
    const found = (await indexes('transactions')).find((index) => JSON.stringify(index.key) === JSON.stringify({ state: 1 }));
    expect(found).toBeDefined();
    const states = (found!.partialFilterExpression as { state: { $in: string[] } }).state.$in;
    expect([...states].sort()).toEqual(['pending', 'rolling_back']);
  });

  it('rollbacks: both reads of rollback outcomes go through indexes that hold rollbacks only', async () => {
    // Besides `_id` and the decisions' age (on `at`, for the sweep's pruning), which every outcome needs:
    const partial = (await indexes('outcomes')).filter((index) => index.name !== '_id_' && index.name !== 'decisions_by_age');
    // Rollbacks of one call (before a tag is refused as a duplicate), and those decided but not carried out (the sweep).
    expect(partial.map((index) => Object.keys(index.key as Document).join(',')).sort()).toEqual([
      'account_tag,transaction_tag',
      'state,at',
    ]);
    for (const index of partial) expect(index.partialFilterExpression).toEqual({ op: 'rollback' });
  });

  it('an upgrade drops the full (account_tag, transaction_tag) index on outcomes that the partial one replaces', async () => {
    const outcomes = ctx.mongo.collections.outcomes;
    for (const index of await indexes('outcomes')) if (index.name !== '_id_') await outcomes.dropIndex(index.name as string);
    await outcomes.createIndex({ account_tag: 1, transaction_tag: 1 });
    await ensureIndexes(ctx.mongo.collections);
    const keyed = (await indexes('outcomes')).filter((index) => index.key.account_tag === 1);
    expect(keyed).toHaveLength(1);
    expect(keyed[0].partialFilterExpression).toEqual({ op: 'rollback' });
  });

  it('an upgrade drops the one-day TTL on outcomes: decisions are deleted by the sweep, never before it settled them (issue 31)', async () => {
    const outcomes = ctx.mongo.collections.outcomes;
    for (const index of await indexes('outcomes')) if (index.name !== '_id_') await outcomes.dropIndex(index.name as string);
    await outcomes.createIndex({ at: 1 }, { expireAfterSeconds: 86_400 });
    await ensureIndexes(ctx.mongo.collections);
    const byAge = (await indexes('outcomes')).filter((index) => JSON.stringify(index.key) === JSON.stringify({ at: 1 }));
    expect(byAge.map((index) => [index.name, index.expireAfterSeconds])).toEqual([['decisions_by_age', undefined]]);
  });
});
