import { randomUUID } from 'node:crypto';
import { callId } from '../../../src/shared/domain/types';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { chargeOp, finishGuarded, writeGuarded } from '../../../src/shared/domain/ledger';
import type { Collections } from '../../../src/shared/domain/store';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { record } from '../../../src/workers/transactions/record';
import { rollback } from '../../../src/workers/transactions/rollback';
import { authorize } from '../../../src/workers/transactions/authorization';
import { previewRerating, startRerating } from '../../../src/shared/domain/rerating';
import { processRerateBatch } from '../../../src/workers/rerating/batch';
import { ApiHarness, startApi } from '../api/api-harness';
import { callJobs } from '../../support/call-jobs';
import { account, perSecondRating, runningEntry, seed } from '../../support/seed';

/**
 * Issue 31, "The audit": exact while calls are charged (no false difference when money moves between
 * its reads), no permanent difference from renaming or deleting an account with a history, and a
 * second check for what the balance fold cannot see (a rolled-back call that still shows a charged
 * record, a charged record refunded, a running entry beside its call's record).
 */
describe('the ledger audit under live traffic', () => {
  let api: ApiHarness;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const t0 = Date.now() - 3_600_000;
  let n = 0;
  const recordJob = callJobs(t0).record;
  const charge = (tag: string, accountTag: string, seconds = 10) => {
    const job = recordJob(tag, accountTag, seconds);
    return record(deps, job, { id: `job-${++n}`, deadline: job.deadline });
  };

  beforeAll(async () => {
    api = await startApi();
    await seed(api.ctx, {
      ...perSecondRating(),
      accounts: [
        account('busy', { balance: 10_000n, linked_accounts: ['busyparent'] }),
        account('busyparent', { balance: 10_000n }),
        account('plain', { balance: 100n }),
      ],
    });
    rating = await RatingDataCache.start(api.ctx);
    deps = { ctx: api.ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await api?.close();
  });

  /** The audit's collections, with `between` run after its ledger and records reads, before it reads accounts. */
  const withChargeBetweenReads = (between: () => Promise<unknown>): Collections => {
    const real = api.ctx.mongo.collections;
    let fired = false;
    const accounts = new Proxy(real.accounts, {
      get(target, prop, receiver) {
        if (prop !== 'find') {
          const value = Reflect.get(target, prop, receiver) as unknown;
          // The driver's own methods (findOne uses find) run on the real collection.
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        }
        return (...args: Parameters<typeof target.find>) => {
          const cursor = target.find(...args);
          return {
            async *[Symbol.asyncIterator]() {
              if (!fired) {
                fired = true;
                await between();
              }
              yield* cursor;
            },
          };
        };
      },
    });
    return { ...real, accounts } as Collections;
  };

  it('reports no difference for calls charged between its reads', async () => {
    expect(await charge('live-0', 'busy')).toMatchObject({ ok: true });
    const report = await auditLedger(withChargeBetweenReads(() => Promise.all([charge('live-1', 'busy'), charge('live-2', 'busy', 20)])));
    expect(report.differences).toEqual([]);
    expect((await auditLedger(api.ctx.mongo.collections)).differences).toEqual([]);
  });

  it('still names a real difference (a balance changed behind the ledger)', async () => {
    await api.ctx.mongo.collections.accounts.updateOne({ account_tag: 'plain' }, { $inc: { balance: 7n } as never });
    const report = await auditLedger(api.ctx.mongo.collections);
    expect(report.differences).toEqual([{ account_tag: 'plain', balance_difference: 7n, records_difference: 0n }]);
    await api.ctx.mongo.collections.accounts.updateOne({ account_tag: 'plain' }, { $inc: { balance: -7n } as never });
  });

  it('counts a charge applied but not yet in the ledger (its marker on the account) when its record is already marked charged', async () => {
    // processing marks the record charged beside writing the entry, and a worker killed between the two
    // leaves this until the recovery sweep settles the marker: the charge is applied once, by the marker.
    const { collections } = api.ctx.mongo;
    const recorded = (await collections.transactions.findOne({ account_tag: 'busy', state: 'charged' }))!;
    const doc = { ...recorded, _id: randomUUID(), transaction_tag: 'marked-first', fee: 14n, state: 'charged' as const };
    const applied = await writeGuarded(collections, chargeOp(doc), {}, {});
    expect(applied).not.toBeNull();
    await collections.transactions.insertOne(doc);

    const report = await auditLedger(collections, { recheckPauseMs: 50 });
    expect(report.differences).toEqual([]);
    expect(report.calls).toEqual([]);
    expect(report.pending_markers).toBe(1);

    await finishGuarded(collections, 'busy', applied!.marker);
    expect((await auditLedger(collections, { recheckPauseMs: 50 })).differences).toEqual([]);
  });

  it('leaves no difference after an account with a ledger history is deleted and its tag used again', async () => {
    await api.ok('mutation { createAccount(account_tag: "gone", balance: "100") { id } }');
    await api.ok('mutation { adjustBalance(account_tag: "gone", amount: "50", reason: "cash") { id } }');
    const { deleteAccount } = await api.ok(
      `mutation { deleteAccount(id: "${(await api.ctx.mongo.collections.accounts.findOne({ account_tag: 'gone' }))!._id}") { id } }`,
    );
    expect(deleteAccount.id).toBeTruthy();
    await api.ok('mutation { createAccount(account_tag: "gone", balance: "30") { id } }');
    expect((await auditLedger(api.ctx.mongo.collections)).differences).toEqual([]);
  });

  it("a tag used again after a deletion: the old customer's calls are neither rolled back nor rerated onto the new account", async () => {
    await seed(api.ctx, { accounts: [account('reused', { balance: 1000n })] });
    expect(await charge('old-call', 'reused', 30)).toMatchObject({ ok: true });
    const oldId = (await api.ctx.mongo.collections.accounts.findOne({ account_tag: 'reused' }))!._id;
    await api.ok(`mutation { deleteAccount(id: "${oldId}") { id } }`);
    await api.ok('mutation { createAccount(account_tag: "reused", balance: "500") { id } }');
    const job = { op: 'rollback' as const, transaction_tag: 'old-call', account_tag: 'reused', deadline: Date.now() + 10_000 };
    expect(await rollback(deps, job, { id: `job-${++n}`, deadline: job.deadline })).toMatchObject({ ok: false, reason: 'NOT_FOUND' });

    const selection = {
      from: new Date(t0 - 60_000),
      to: new Date(),
      account_tags: ['reused'],
      pricelist_tag: null,
      carrier_tag: null,
      prefix: null,
    };
    expect(await previewRerating(api.ctx.mongo.collections, await rating.index(), selection, 3)).toMatchObject({ records: 0 });
    const run = await startRerating(api.ctx.mongo.collections, api.ctx.queues.imports, selection, { batchSize: 10 });
    await processRerateBatch(deps, { rerating_id: run._id, batch: 0 });
    expect(await api.ctx.mongo.collections.reratings.findOne({ _id: run._id })).toMatchObject({ state: 'done', counts: { seen: 0 } });

    expect((await api.ctx.mongo.collections.accounts.findOne({ account_tag: 'reused' }))!.balance).toBe(500n);
    // The old record stays, marked as the deleted account's.
    expect(await api.ctx.mongo.collections.transactions.findOne({ account_tag: 'reused', transaction_tag: 'old-call' })).toMatchObject({
      closed_account: oldId,
    });

    expect((await auditLedger(api.ctx.mongo.collections)).differences).toEqual([]);
  });

  it("a deleted child's tag used again: a rollback of an old Call-ID leaves the parent's share of the old call alone", async () => {
    await seed(api.ctx, {
      accounts: [
        account('kid', { balance: 1000n, linked_accounts: ['kidparent'] }),
        account('kidparent', { type: 'POSTPAID', balance: 0n }),
      ],
    });
    expect(await charge('kid-old', 'kid', 30)).toMatchObject({ ok: true });
    const parentCharged = (await api.ctx.mongo.collections.accounts.findOne({ account_tag: 'kidparent' }))!.balance;
    expect(parentCharged).toBeLessThan(0n);
    await api.ok('mutation { deleteAccount(account_tag: "kid") { id } }');
    // Concurrency limits: the authorization reserves a slot on each party, naming the call's parties.
    await seed(api.ctx, { accounts: [account('kid', { balance: 500n, linked_accounts: ['kidparent'], max_concurrent_transactions: 5 })] });
    await api.ctx.mongo.collections.accounts.updateOne({ account_tag: 'kidparent' }, { $set: { max_concurrent_transactions: 5 } });
    // The new customer's switch sends the old Call-ID: the authorization holds a slot on both parties.
    const auth = callJobs(t0).authorization('kid-old', 'kid');
    expect(await authorize(deps, auth)).toMatchObject({ authorized: true });
    const job = callJobs(t0).rollback('kid-old', 'kid');
    expect(await rollback(deps, job, { id: `job-${++n}`, deadline: job.deadline })).toMatchObject({ ok: true });
    expect((await api.ctx.mongo.collections.accounts.findOne({ account_tag: 'kidparent' }))!.balance).toBe(parentCharged);
    expect(await api.ctx.mongo.collections.transactions.countDocuments({ account_tag: 'kidparent', transaction_tag: 'kid-old' })).toBe(1);
    expect((await auditLedger(api.ctx.mongo.collections)).differences).toEqual([]);
  });

  it('refuses to rename an account with a ledger history (its entries stay under its tag)', async () => {
    await api.ok('mutation { createAccount(account_tag: "named", balance: "10") { id } }');
    const id = (await api.ctx.mongo.collections.accounts.findOne({ account_tag: 'named' }))!._id;
    await api.ok(`mutation { updateAccount(id: "${id}", balance: "25") { id } }`);
    const renamed = await api.gql(`mutation { updateAccount(id: "${id}", account_tag: "renamed") { id } }`);
    expect(renamed.body.errors?.[0]?.extensions?.code).toBe('INVALID_REFERENCE');
    expect((await auditLedger(api.ctx.mongo.collections)).differences).toEqual([]);
  });

  describe('the call check: what the balance fold cannot see', () => {
    let collections: Collections;
    beforeAll(() => {
      collections = api.ctx.mongo.collections;
    });

    it('is clean on a consistent history', async () => {
      expect((await auditLedger(collections)).calls).toEqual([]);
    });

    it('finds a charged record whose charge was refunded (a rolled-back call showing charged)', async () => {
      expect(await charge('refunded', 'plain', 1)).toMatchObject({ ok: true });
      const doc = (await collections.transactions.findOne({ account_tag: 'plain', transaction_tag: 'refunded' }))!;
      expect(
        await rollback(
          deps,
          { op: 'rollback', transaction_tag: 'refunded', account_tag: 'plain', deadline: Date.now() + 10_000 },
          { id: `job-${++n}`, deadline: Date.now() + 10_000 },
        ),
      ).toEqual({ ok: true, reason: null });
      await collections.transactions.insertOne({ ...doc, state: 'charged' });
      const report = await auditLedger(collections);
      expect(report.calls).toEqual(
        expect.arrayContaining([expect.objectContaining({ problem: 'charged record refunded', account_tag: 'plain', record_id: doc._id })]),
      );
      expect(report.calls).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ problem: 'record of a rolled-back call', account_tag: 'plain', record_id: doc._id }),
        ]),
      );
      await collections.transactions.deleteOne({ _id: doc._id });
    });

    it("finds a charged record without its charge, and a running entry beside its call's record", async () => {
      const orphan = {
        ...(await collections.transactions.findOne({ account_tag: 'busy' }))!,
        _id: randomUUID(),
        transaction_tag: 'no-charge',
        state: 'charged' as const,
      };
      await collections.transactions.insertOne(orphan);
      expect(await charge('both', 'plain', 1)).toMatchObject({ ok: true });
      await collections.accounts.updateOne(
        { account_tag: 'plain' },
        { $push: { running_transactions: runningEntry('both', { origin_account_tag: 'plain', call_id: callId('plain', 'both') }) } },
      );
      const report = await auditLedger(collections);
      expect(report.calls).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ problem: 'charged record without its charge', account_tag: 'busy', record_id: orphan._id }),
          expect.objectContaining({ problem: 'running entry of a recorded call', account_tag: 'plain', transaction_tag: 'both' }),
        ]),
      );
      await collections.transactions.deleteOne({ _id: orphan._id });
      await collections.accounts.updateOne({ account_tag: 'plain' }, { $set: { running_transactions: [] } });
    });
  });
});
