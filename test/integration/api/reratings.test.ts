import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { processRerateBatch } from '../../../src/workers/rerating/batch';
import { record } from '../../../src/workers/transactions/record';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { callJobs } from '../../support/call-jobs';
import { account, perSecondRating, seed } from '../../support/seed';
import { ApiHarness, expectError, startApi } from './api-harness';

/** Issue 34, part 2: rerating through the management API: the dry run, a run, its progress, bad input. */
describe('API reratings', () => {
  let api: ApiHarness;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const t0 = Date.now() - 600_000;
  const from = new Date(t0 - 60_000).toISOString();
  const to = new Date().toISOString();

  beforeAll(async () => {
    api = await startApi();
    await seed(api.ctx, { ...perSecondRating('39', 0), accounts: [account('alice', { type: 'POSTPAID', balance: 0n })] });
    rating = await RatingDataCache.start(api.ctx);
    deps = { ctx: api.ctx, rating };
    const jobs = callJobs(t0);
    for (const [i, seconds] of [30, 60, 90].entries()) {
      expect(await record(deps, jobs.record(`a${i}`, 'alice', seconds), { id: `j${i}`, deadline: Date.now() + 10_000 })).toMatchObject({
        ok: true,
      });
    }
    // The price doubles, through the API (its change is announced to every holder of rating data).
    const { allPricelistRates } = await api.ok('{ allPricelistRates { id } }');
    await api.ok(`mutation { updatePricelistRate(id: "${allPricelistRates[0].id}", rate: 120) { id } }`);
  });

  afterAll(async () => {
    await rating?.close();
    await api.close();
  });

  it('the dry run counts the changes per account and shows the biggest, changing nothing', async () => {
    const { reratingPreview } = await api.ok(
      `{ reratingPreview(from: "${from}", to: "${to}", sample: 2) { records changed unchanged unrated difference accounts { account_tag records difference } sample { transaction_tag fee_before fee_after } } }`,
    );
    expect(reratingPreview).toEqual({
      records: 3,
      changed: 3,
      unchanged: 0,
      unrated: 0,
      difference: 180,
      accounts: [{ account_tag: 'alice', records: 3, difference: 180 }],
      sample: [
        { transaction_tag: 'a2', fee_before: 90, fee_after: 180 },
        { transaction_tag: 'a1', fee_before: 60, fee_after: 120 },
      ],
    });
    expect((await api.ok('{ Account(account_tag: "alice") { balance } }')).Account.balance).toBe(-180);
  });

  it('a run started through the API is done by the workers, and its progress and the records history show it', async () => {
    const { createRerating } = await api.ok(
      `mutation { createRerating(from: "${from}", to: "${to}", account_tags: ["alice"]) { id state seen } }`,
    );
    expect(createRerating).toMatchObject({ state: 'running', seen: 0 });
    await processRerateBatch(deps, { rerating_id: createRerating.id, batch: 0 });
    const { Rerating, _allReratingsMeta } = await api.ok(
      `{ Rerating(id: "${createRerating.id}") { state seen changed unchanged skipped difference batches finished_at } _allReratingsMeta { count } }`,
    );
    expect(Rerating).toMatchObject({ state: 'done', seen: 3, changed: 3, unchanged: 0, skipped: 0, difference: 180, batches: 1 });
    expect(_allReratingsMeta.count).toBe(1);
    expect((await api.ok('{ Account(account_tag: "alice") { balance } }')).Account.balance).toBe(-360);
    const { Transaction } = await api.ok(
      '{ Transaction(account_tag: "alice", transaction_tag: "a0") { fee reratings { fee_before fee_after } } }',
    );
    expect(Transaction).toEqual({ fee: 60, reratings: [{ fee_before: 30, fee_after: 60 }] });
  });

  it('refuses a bad selection and starts nothing', async () => {
    expectError(await api.gql(`mutation { createRerating(from: "${to}", to: "${from}") { id } }`), 'BAD_USER_INPUT', 'to');
    expectError(await api.gql(`{ reratingPreview(from: "${from}", to: "${to}", sample: 1000) { records } }`), 'BAD_USER_INPUT', 'sample');
    expect((await api.ok('{ _allReratingsMeta { count } }'))._allReratingsMeta.count).toBe(1);
  });
});
