import type { RunningTransaction } from '../../../src/shared/domain/types';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { opIds } from '../../../src/shared/domain/ledger';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { createTestContext, TestContext } from '../../support/harness';
import { account, runningEntry } from '../../support/seed';

/**
 * A charge interrupted after its ledger entry was written but before its marker was removed (a worker
 * killed between the two; found by the many-process test, issue 13): the audit must not count that
 * amount twice, and the job's re-run must remove the marker rather than leave it to the recovery sweep.
 */
describe('a charge interrupted between its ledger entry and the marker removal', () => {
  let ctx: TestContext;
  let rating: RatingDataCache;

  const began = new Date('2026-11-23T10:00:00Z');
  const entry: RunningTransaction = runningEntry('t1', {
    id: 'entry-1',
    origin_account_tag: 'a',
    in_progress: false,
    timestamp_begin: began,
    timestamp_end: new Date(began.getTime() + 10_000),
    call_parties: ['a'],
  });

  beforeAll(async () => {
    ctx = await createTestContext();
    rating = await RatingDataCache.start(ctx);
    await ctx.mongo.collections.accounts.insertOne(account('a', { balance: 100n, running_transactions: [entry] }));
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('is counted once by the audit and settled by the re-run', async () => {
    const { accounts, ledger } = ctx.mongo.collections;
    const job = { account_tag: 'a', transaction_tag: 't1', entry_id: entry.id, enqueued_at: new Date().toISOString() };
    expect((await processEndedCall({ ctx, rating }, job)).outcome).toBe('charged');
    const op = opIds.charge(entry.id);
    const written = await ledger.findOne({ _id: op });
    expect(written).toMatchObject({ account_tag: 'a', amount: -10n });
    // The state a kill between the entry and the marker removal leaves: the marker is still there.
    await accounts.updateOne(
      { account_tag: 'a' },
      { $push: { ledger_pending: { op, amount: -10n, kind: 'charge', transaction_tag: 't1', ref: entry.id, at: written!.at } } },
    );
    expect((await accounts.findOne({ account_tag: 'a' }))!.balance).toBe(90n);

    const report = await auditLedger(ctx.mongo.collections);
    expect(report.differences).toEqual([]);
    expect(report.pending_markers).toBe(0);

    // The job runs again (its first run was killed): the call is not charged twice, and the marker goes.
    expect((await processEndedCall({ ctx, rating }, job)).outcome).toBe('already-done');
    const after = await accounts.findOne({ account_tag: 'a' });
    expect(after!.balance).toBe(90n);
    expect(after!.ledger_pending ?? []).toEqual([]);
    expect(await ledger.countDocuments({ account_tag: 'a' })).toBe(1);
  });
});
