import type { RecordJob } from '../../../src/shared/domain/calls';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { record } from '../../../src/workers/transactions/record';
import { refundRecord } from '../../../src/workers/transactions/refund';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, runningEntry, seed } from '../../support/seed';

/**
 * A tag recorded again while the rollback of its first use is answered ok but carried out only on the
 * caller so far (found by the chaos test, session 3): the parent still holds the first use's record.
 * The new record must carry that rollback out and then charge the parent for the new call; before, it
 * took the old record for the parent's share, and the pending rollback then deleted it: the parent was
 * never charged for the second call.
 */
describe('record of a tag whose earlier rollback is decided but not carried out on a parent', () => {
  let ctx: TestContext;
  let rating: RatingDataCache;
  const job = (seconds: number, caller = 'a1', tag = 't1'): RecordJob => {
    const begin = new Date('2026-11-23T10:00:00Z');
    return {
      op: 'record',
      transaction_tag: tag,
      account_tag: caller,
      source: '100',
      destination: '391234',
      source_ip: null,
      carrier_ip: null,
      tags: null,
      destination_account_tag: null,
      timestamp_auth: null,
      timestamp_begin: begin.toISOString(),
      timestamp_end: new Date(begin.getTime() + seconds * 1000).toISOString(),
      deadline: Date.now() + 10_000,
    };
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating('39', 0),
      accounts: [
        account('a1', { balance: 1000n, linked_accounts: ['p1'] }),
        account('p1', { balance: 1000n }),
        account('a2', { balance: 1000n, linked_accounts: ['p2'] }),
        account('p2', { balance: 1000n }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('carries the rollback out and charges the parent for the new call', async () => {
    const deps = { ctx, rating };
    const { transactions, accounts, outcomes } = ctx.mongo.collections;
    expect(await record(deps, job(10), { id: 'J1', deadline: Date.now() + 10_000, rerun: false })).toMatchObject({ ok: true });
    const [first, firstParent] = await Promise.all(
      ['a1', 'p1'].map((tag) => transactions.findOne({ account_tag: tag, transaction_tag: 't1' })),
    );
    // The rollback of the first use, decided 'done' (answered ok) and carried out on the caller only.
    await outcomes.insertOne({
      _id: 'RB',
      state: 'done',
      op: 'rollback',
      account_tag: 'a1',
      transaction_tag: 't1',
      result: { ok: true, reason: null },
      targets: [
        { account_tag: 'a1', record_id: first!._id },
        { account_tag: 'p1', record_id: firstParent!._id },
      ],
      at: new Date(),
    });
    await refundRecord(deps, first!);

    expect(await record(deps, job(25), { id: 'J2', deadline: Date.now() + 10_000, rerun: false })).toMatchObject({ ok: true });
    for (const tag of ['a1', 'p1']) {
      const records = await transactions.find({ account_tag: tag, transaction_tag: 't1' }).toArray();
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ record_job: 'J2', fee: 25n, state: 'charged' });
      // Charged 10, refunded 10, charged 25.
      expect((await accounts.findOne({ account_tag: tag }))!.balance).toBe(975n);
    }
    expect((await outcomes.findOne({ _id: 'RB' }))!.applied_at).toBeInstanceOf(Date);
  });

  it("the same for a call begun and ended again: the parent's processing charges the new call", async () => {
    const deps = { ctx, rating };
    const { transactions, accounts, outcomes } = ctx.mongo.collections;
    expect(await record(deps, job(10, 'a2', 't2'), { id: 'K1', deadline: Date.now() + 10_000, rerun: false })).toMatchObject({ ok: true });
    const [first, firstParent] = await Promise.all(
      ['a2', 'p2'].map((tag) => transactions.findOne({ account_tag: tag, transaction_tag: 't2' })),
    );
    await outcomes.insertOne({
      _id: 'RB2',
      state: 'done',
      op: 'rollback',
      account_tag: 'a2',
      transaction_tag: 't2',
      result: { ok: true, reason: null },
      targets: [
        { account_tag: 'a2', record_id: first!._id },
        { account_tag: 'p2', record_id: firstParent!._id },
      ],
      at: new Date(),
    });
    await refundRecord(deps, first!);
    // The second use, begun and ended (the parent's ended entry, as begin and end leave it).
    const began = new Date('2026-11-23T11:00:00Z');
    const ended = runningEntry('t2', {
      id: 'entry-p2',
      origin_account_tag: 'a2',
      destination: '391234',
      in_progress: false,
      timestamp_begin: began,
      timestamp_end: new Date(began.getTime() + 25_000),
      call_parties: ['a2', 'p2'],
    });
    await accounts.updateOne({ account_tag: 'p2' }, { $push: { running_transactions: ended } });
    expect(
      (
        await processEndedCall(deps, {
          account_tag: 'p2',
          transaction_tag: 't2',
          entry_id: 'entry-p2',
          enqueued_at: new Date().toISOString(),
        })
      ).outcome,
    ).toBe('charged');
    const records = await transactions.find({ account_tag: 'p2', transaction_tag: 't2' }).toArray();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ _id: 'entry-p2', fee: 25n, state: 'charged' });
    expect((await accounts.findOne({ account_tag: 'p2' }))!.balance).toBe(975n);
  });
});
