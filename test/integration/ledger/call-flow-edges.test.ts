import { callId } from '../../../src/shared/domain/types';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import type { ProcessingJob } from '../../../src/shared/domain/queues/payloads';
import type { AuthorizationJob } from '../../../src/shared/domain/calls';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { recoverInterrupted } from '../../../src/workers/maintenance/recover';
import { requeueEndedCalls } from '../../../src/workers/maintenance/requeue-ended';
import { authorize } from '../../../src/workers/transactions/authorization';
import { begin } from '../../../src/workers/transactions/begin';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { end } from '../../../src/workers/transactions/end';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { reconcile } from '../../../src/workers/transactions/reconcile';
import { insertRecord } from '../../../src/workers/transactions/record-store';
import { record } from '../../../src/workers/transactions/record';
import { rollback } from '../../../src/workers/transactions/rollback';
import { transactionProcessor } from '../../../src/workers/transactions/processor';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { account, carrier, perSecondRating, pricelist, rate, seed } from '../../support/seed';

/**
 * Issue 31: the money promises at the edges of the call flows a real SIP proxy drives. Each case was
 * "ledger-consistent" (the balance audit stayed clean) while a customer was charged wrongly, so each
 * asserts balances, records and running entries, not only the audit. The worker's functions run in
 * this process against the real servers; crash points are set up by hand. Rates: 60 per minute in 1 s
 * steps with a connect fee of 1, so a call of n seconds costs n + 1.
 */
describe('money at the edges of real call flows', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const accounts = () => ctx.mongo.collections.accounts;
  const transactions = () => ctx.mongo.collections.transactions;
  const outcomes = () => ctx.mongo.collections.outcomes;
  const balance = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.balance;
  const running = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.running_transactions;
  const ok = { ok: true, reason: null };
  const jobs = callJobs(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const { begin: beginJob, end: endJob, record: recordJob, rollback: rollbackJob, authorization: authorizationJob } = jobs;
  let jobCount = 0;
  const run = async <J extends { deadline: number }, R>(
    fn: (d: TransactionDeps, job: J, r: { id: string; deadline: number }) => Promise<R>,
    job: J,
  ) => fn(deps, job, { id: `job-${++jobCount}`, deadline: job.deadline });
  const processAll = async (tag: string) => {
    for (const entry of (await running(tag)).filter((e) => !e.in_progress)) {
      await processEndedCall(deps, {
        account_tag: tag,
        transaction_tag: entry.transaction_tag,
        entry_id: entry.id,
        enqueued_at: new Date().toISOString(),
      });
    }
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating(),
      accounts: [
        account('mix', { balance: 1000n, max_concurrent_transactions: 5 }),
        account('mix2', { balance: 1000n, linked_accounts: ['mixparent'], max_concurrent_transactions: 5 }),
        account('mixparent', { balance: 1000n, max_concurrent_transactions: 5 }),
        account('redeliver', { balance: 1000n }),
        account('redeliver0', { balance: 1000n }),
        account('child', { balance: 1000n, linked_accounts: ['parent'] }),
        account('parent', { balance: 1000n }),
        account('thrower', { balance: 1000n, linked_accounts: ['broken'] }),
        account('broken', { balance: 1000n }),
        account('longcall', { balance: 1_000_000n, type: 'POSTPAID' }),
        account('rbchild', { balance: 1000n, linked_accounts: ['rbparent'] }),
        account('rbparent', { balance: 1000n }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  describe('a rollback that comes while a linked call is half made (its begin or record not decided yet)', () => {
    /**
     * deps whose collection `name` holds `method` at a call `hit` picks until `open()`: the worker paused
     * between the caller's write and the parent's, as a slow write or a busy account leaves it.
     */
    const pausedAt = <K extends 'accounts' | 'transactions'>(name: K, method: string, hit: (args: unknown[]) => boolean) => {
      let open!: () => void;
      let reached!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const paused = new Promise<void>((resolve) => (reached = resolve));
      const real = ctx.mongo.collections[name];
      const proxy = new Proxy(real, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver) as unknown;
          if (typeof value !== 'function') return value;
          if (prop !== method) return (value as (...a: unknown[]) => unknown).bind(target);
          return async (...args: unknown[]) => {
            if (hit(args)) {
              reached();
              await gate;
            }
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      const pausedDeps = { ...deps, ctx: { ...ctx, mongo: { ...ctx.mongo, collections: { ...ctx.mongo.collections, [name]: proxy } } } };
      return { deps: pausedDeps as TransactionDeps, paused, open };
    };
    const text = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    const onParent = (args: unknown[]) => text(args[0]).includes('"rbparent"');

    it('begin: the rollback waits for the begin, then takes the entries of every party', async () => {
      const held = pausedAt('accounts', 'updateOne', (args) => onParent(args) && text(args[1]).includes('$push'));
      const job = beginJob('rb-begin', 'rbchild');
      const begun = begin(held.deps, job, { id: 'begin-rb', deadline: job.deadline });
      await held.paused; // the caller's entry made, the parent's not yet
      expect(await running('rbchild')).toHaveLength(1);
      const rolledBack = run(rollback, rollbackJob('rb-begin', 'rbchild'));
      await new Promise((resolve) => setTimeout(resolve, 300));
      held.open();
      expect(await begun).toEqual(ok);
      expect(await rolledBack).toEqual(ok);
      expect(await running('rbchild')).toEqual([]);
      expect(await running('rbparent')).toEqual([]);
      await recoverInterrupted(deps, new Date(Date.now() + 3_600_000));
      expect(await running('rbparent')).toEqual([]);
    });

    it('record: the rollback waits for the record, then refunds every party', async () => {
      const held = pausedAt('transactions', 'insertMany', (args) => text(args[0]).includes('"account_tag":"rbparent"'));
      const job = recordJob('rb-record', 'rbchild', 10);
      const recorded = record(held.deps, job, { id: 'record-rb', deadline: job.deadline });
      await held.paused; // the caller's record written, the parent's not yet
      const rolledBack = run(rollback, rollbackJob('rb-record', 'rbchild'));
      await new Promise((resolve) => setTimeout(resolve, 300));
      held.open();
      expect(await recorded).toMatchObject(ok);
      expect(await rolledBack).toEqual(ok);
      expect(await balance('rbchild')).toBe(1000n);
      expect(await balance('rbparent')).toBe(1000n);
      expect(await transactions().countDocuments({ transaction_tag: 'rb-record' })).toBe(0);
      expect(await auditLedger(ctx.mongo.collections)).toMatchObject({ differences: [] });
    });
  });

  describe('defect 2: rollback refunds every charged record and releases every entry, whatever mix it finds', () => {
    it('a recorded call whose tag an authorization reserved again: rollback refunds the record and releases the reservation', async () => {
      expect(await run(record, recordJob('m1', 'mix', 10))).toMatchObject(ok);
      expect(await balance('mix')).toBe(989n);
      expect((await run(authorize, authorizationJob('m1', 'mix'))).authorized).toBe(true);
      expect(await running('mix')).toHaveLength(1);
      expect(await run(rollback, rollbackJob('m1', 'mix'))).toEqual(ok);
      expect(await balance('mix')).toBe(1000n);
      expect(await transactions().countDocuments({ account_tag: 'mix', transaction_tag: 'm1' })).toBe(0);
      expect(await running('mix')).toEqual([]);
    });

    it('a record job killed after deciding done but before releasing its reservations (linked parent too): rollback takes all of it', async () => {
      expect((await run(authorize, authorizationJob('m2', 'mix2'))).authorized).toBe(true);
      expect(await running('mix2')).toHaveLength(1);
      expect(await running('mixparent')).toHaveLength(1);
      expect(await run(record, recordJob('m2', 'mix2', 10))).toMatchObject(ok);
      // The crash point: records charged and decided, reservations not released yet.
      const reservations = { mix2: (await running('mix2'))[0], mixparent: (await running('mixparent'))[0] };
      for (const [tag, entry] of Object.entries(reservations)) {
        if (entry) continue;
        const reservation = {
          id: `res-${tag}`,
          transaction_tag: 'm2',
          origin_account_tag: 'mix2',
          call_id: callId('mix2', 'm2'),
          source: '1',
          destination: '391234',
          carrier_ip: '',
          rate: null,
          in_progress: true,
          inbound: false,
          timestamp_begin: new Date(),
          timestamp_end: null,
          reserved_until: new Date(Date.now() + 60_000),
          call_parties: ['mix2', 'mixparent'],
        };
        await accounts().updateOne({ account_tag: tag }, { $push: { running_transactions: reservation } });
      }
      expect(await balance('mix2')).toBe(989n);
      expect(await balance('mixparent')).toBe(989n);
      expect(await run(rollback, rollbackJob('m2', 'mix2'))).toEqual(ok);
      expect(await balance('mix2')).toBe(1000n);
      expect(await balance('mixparent')).toBe(1000n);
      expect(await transactions().countDocuments({ transaction_tag: 'm2' })).toBe(0);
      expect(await running('mix2')).toEqual([]);
      expect(await running('mixparent')).toEqual([]);
    });

    it('recordTransaction of a call that is running is refused as DUPLICATE_TRANSACTION, and changes nothing', async () => {
      expect(await run(begin, beginJob('m3', 'mix'))).toEqual(ok);
      expect(await run(record, recordJob('m3', 'mix', 10))).toMatchObject({ ok: false, reason: 'DUPLICATE_TRANSACTION' });
      expect(await balance('mix')).toBe(1000n);
      expect(await transactions().countDocuments({ transaction_tag: 'm3' })).toBe(0);
      expect(await run(rollback, rollbackJob('m3', 'mix'))).toEqual(ok);
      expect(await running('mix')).toEqual([]);
    });
  });

  it('defect 6: a processing job redelivered after the call was charged and rolled back leaves no charged record', async () => {
    expect(await run(begin, beginJob('p1', 'redeliver'))).toEqual(ok);
    expect(await run(end, endJob('p1', 'redeliver', 10))).toEqual(ok);
    const entry = (await running('redeliver'))[0];
    const job: ProcessingJob = {
      account_tag: 'redeliver',
      transaction_tag: 'p1',
      entry_id: entry.id,
      enqueued_at: new Date().toISOString(),
    };
    // The first delivery reads the entry, then stalls; the redelivery charges the call.
    const stalled = (await transactions().findOne({ _id: entry.id })) ?? null;
    expect(stalled).toBeNull();
    expect((await processEndedCall(deps, job)).outcome).toBe('charged');
    const charged = (await transactions().findOne({ _id: entry.id }))!;
    expect(await run(rollback, rollbackJob('p1', 'redeliver'))).toEqual(ok);
    expect(await balance('redeliver')).toBe(1000n);
    // The stalled delivery wakes up: its record insert comes after the rollback deleted the record,
    // then its guarded debit finds no entry and it reconciles.
    await insertRecord(transactions(), { ...charged, state: 'pending' });
    await reconcile(deps, 'redeliver', entry.id);
    expect(await transactions().countDocuments({ account_tag: 'redeliver', transaction_tag: 'p1' })).toBe(0);
    expect(await balance('redeliver')).toBe(1000n);
    // The tag can be used again.
    expect(await run(record, recordJob('p1', 'redeliver', 5))).toMatchObject(ok);
    expect(await balance('redeliver')).toBe(994n);
  });

  it('defect 6, a free call (0 s, fee 0): the redelivered processing job after the rollback leaves no charged record either', async () => {
    expect(await run(begin, beginJob('f0', 'redeliver0'))).toEqual(ok);
    expect(await run(end, endJob('f0', 'redeliver0', 0))).toEqual(ok);
    const entry = (await running('redeliver0'))[0];
    const job: ProcessingJob = {
      account_tag: 'redeliver0',
      transaction_tag: 'f0',
      entry_id: entry.id,
      enqueued_at: new Date().toISOString(),
    };
    expect((await processEndedCall(deps, job)).outcome).toBe('charged');
    const charged = (await transactions().findOne({ _id: entry.id }))!;
    expect(charged.fee).toBe(0n);
    expect(await run(rollback, rollbackJob('f0', 'redeliver0'))).toEqual(ok);
    await insertRecord(transactions(), { ...charged, state: 'pending' });
    await reconcile(deps, 'redeliver0', entry.id);
    expect(await transactions().countDocuments({ account_tag: 'redeliver0', transaction_tag: 'f0' })).toBe(0);
    expect(await balance('redeliver0')).toBe(1000n);
  });

  it('issue 37, timeline 2: a rollback answered ok leaves nothing charged on any party, and its re-send answers NOT_FOUND', async () => {
    expect(await run(begin, beginJob('r37', 'child'))).toEqual(ok);
    expect(await run(end, endJob('r37', 'child', 10))).toEqual(ok);
    const [childEntry] = (await running('child')).filter((e) => e.transaction_tag === 'r37');
    const [parentEntry] = (await running('parent')).filter((e) => e.transaction_tag === 'r37');
    const job = (tag: string, entryId: string): ProcessingJob => ({
      account_tag: tag,
      transaction_tag: 'r37',
      entry_id: entryId,
      enqueued_at: new Date().toISOString(),
    });
    // The parent's processing charges before the rollback; a delivery of it had read the entry first.
    expect((await processEndedCall(deps, job('parent', parentEntry.id))).outcome).toBe('charged');
    const parentRecord = (await transactions().findOne({ _id: parentEntry.id }))!;
    expect(await run(rollback, rollbackJob('r37', 'child'))).toEqual(ok);
    // The stalled deliveries of both parties' processing wake up after the rollback.
    for (const [tag, entry, doc] of [
      ['parent', parentEntry, parentRecord],
      ['child', childEntry, { ...parentRecord, _id: childEntry.id, account_tag: 'child' }],
    ] as const) {
      await insertRecord(transactions(), { ...doc, state: 'pending' });
      await reconcile(deps, tag, entry.id);
    }
    expect(await transactions().countDocuments({ transaction_tag: 'r37' })).toBe(0);
    expect([await balance('child'), await balance('parent')]).toEqual([1000n, 1000n]);
    // Sent again, the rollback finds nothing left to do: the first ok was true.
    expect(await run(rollback, rollbackJob('r37', 'child'))).toEqual({ ok: false, reason: 'NOT_FOUND' });
    expect([await balance('child'), await balance('parent')]).toEqual([1000n, 1000n]);
  });

  it('defect 4: an end finding the entries of a begin that was never decided (abandoned) answers NOT_FOUND and charges no party', async () => {
    // A begin that got the caller's entry in but failed before the parent's, and whose agent answered TIMEOUT.
    expect(await run(begin, beginJob('f1', 'child'))).toEqual(ok);
    const kept = (await running('child'))[0];
    await accounts().updateOne({ account_tag: 'parent' }, { $set: { running_transactions: [] } });
    await outcomes().updateOne({ _id: kept.begin_job! }, { $set: { state: 'abandoned', result: null } });
    expect(await run(end, endJob('f1', 'child', 10))).toEqual({ ok: false, reason: 'NOT_FOUND' });
    await processAll('child');
    expect(await balance('child')).toBe(1000n);
    expect(await balance('parent')).toBe(1000n);
    expect(await running('child')).toEqual([]);
    expect(await transactions().countDocuments({ transaction_tag: 'f1' })).toBe(0);
  });

  it('defect 4: an end after a begin that died between parties (no decision, past its deadline) charges no party', async () => {
    const deadline = Date.now() + 600;
    expect(await begin(deps, beginJob('f2', 'child', deadline), { id: 'f2-begin', deadline })).toEqual(ok);
    await outcomes().deleteOne({ _id: 'f2-begin' });
    await accounts().updateOne({ account_tag: 'parent' }, { $set: { running_transactions: [] } });
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await run(end, endJob('f2', 'child', 10))).toEqual({ ok: false, reason: 'NOT_FOUND' });
    await processAll('child');
    expect(await balance('child')).toBe(1000n);
    expect(await running('child')).toEqual([]);
    expect(await outcomes().findOne({ _id: 'f2-begin' })).toMatchObject({ state: 'abandoned' });
  });

  it('defect 5: a begin that throws between parties takes back what it made and answers UNAVAILABLE at once', async () => {
    // The parent's document cannot take an entry: the begin throws after the caller's entry is in.
    await accounts().updateOne({ account_tag: 'broken' }, { $set: { running_transactions: 'not-a-list' as never } });
    const processor = transactionProcessor(deps);
    const job = beginJob('t1', 'thrower');
    const answer = await processor({ id: 'throwing-begin', name: 'begin', data: job }).then(
      (outcome) => outcome.result,
      (err: unknown) => err,
    );
    expect(answer).toEqual({ ok: false, reason: 'UNAVAILABLE' });
    expect(await running('thrower')).toEqual([]);
    expect(await outcomes().findOne({ _id: 'throwing-begin' })).toMatchObject({ state: 'abandoned' });
    await accounts().updateOne({ account_tag: 'broken' }, { $set: { running_transactions: [] } });
  });

  describe('defect 3: a decision never expires before the state it decides about', () => {
    const day = 86_400_000;
    /** What MongoDB's TTL monitor did to decisions older than a day, then the sweep, `days` later. */
    const daysLater = async (days: number) => {
      const later = new Date(Date.now() + days * day);
      await outcomes().deleteMany({ at: { $lt: new Date(later.getTime() - day) } });
      await recoverInterrupted(deps, later);
      return later;
    };

    it('a call running for two days is still charged when it ends', async () => {
      expect(await run(begin, beginJob('l1', 'longcall'))).toEqual(ok);
      await recoverInterrupted(deps, new Date(Date.now() + 5 * 60_000));
      await daysLater(2);
      expect(await running('longcall')).toHaveLength(1);
      expect(await run(end, endJob('l1', 'longcall', 172_800))).toEqual(ok);
      await processAll('longcall');
      expect(await balance('longcall')).toBe(1_000_000n - 172_801n);
    });

    it('an ended call whose processing keeps failing for two days stays ended and is queued again', async () => {
      expect(await run(begin, beginJob('l2', 'longcall'))).toEqual(ok);
      expect(await run(end, endJob('l2', 'longcall', 30))).toEqual(ok);
      await ctx.queues.processing.obliterate({ force: true });
      await recoverInterrupted(deps, new Date(Date.now() + 5 * 60_000));
      const later = await daysLater(2);
      expect(await running('longcall')).toEqual([expect.objectContaining({ transaction_tag: 'l2', in_progress: false })]);
      expect(await requeueEndedCalls(ctx, later)).toBe(1);
    });
  });

  it('leaves the ledger audit clean', async () => {
    const report = await auditLedger(ctx.mongo.collections);
    expect(report.differences).toEqual([]);
  });
});

describe('defect 1: carrier failover never overdraws a prepaid account', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const authorizationJob = (accountTag: string): AuthorizationJob => ({
    op: 'authorization',
    account_tag: accountTag,
    destination: '391234',
    source: '1',
    transaction_tag: null,
    destination_account_tag: null,
    deadline: Date.now() + 10_000,
  });

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      // c1 at 60/min, c2 at 240/min: a call cut at the grant on c2 must not cost more than the balance.
      carriers: [carrier('c1', { host: '10.0.0.1' }), carrier('c2', { host: '10.0.0.2' })],
      pricelists: [pricelist('pl'), pricelist('dear'), pricelist('c1only')],
      rates: [
        rate('pl', 'c1', '39', { rate: 60, rate_increment: 1, connect_fee: 0 }),
        rate('pl', 'c2', '39', { rate: 240, rate_increment: 1, connect_fee: 0 }),
        // The parent pays 600/min on c2 and 60/min on c1.
        rate('dear', 'c1', '39', { rate: 60, rate_increment: 1, connect_fee: 0 }),
        rate('dear', 'c2', '39', { rate: 600, rate_increment: 1, connect_fee: 0 }),
        rate('c1only', 'c1', '39', { rate: 60, rate_increment: 1, connect_fee: 0 }),
      ],
      accounts: [
        account('prepaid', { balance: 100n }),
        account('kid', { balance: 10_000n, linked_accounts: ['reseller'] }),
        account('reseller', { balance: 100n, pricelist_tags: ['dear'] }),
        // A caller that goes out on c1 only, under a parent that prefers c2 for its own calls.
        account('c1kid', { balance: 10_000n, linked_accounts: ['c2parent'], pricelist_tags: ['c1only'] }),
        account('c2parent', { balance: 100n, pricelist_tags: ['dear'], carrier_tags: ['c2'] }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  /** The fee of a call cut `late` seconds after its grant (the proxy's timer and the end's stamp). */
  const cutCost = async (accountTag: string, units: number, carrierIp: string | null, late: number) => {
    const tag = `cut-${accountTag}-${carrierIp}`;
    const t0 = Date.now() - 3_600_000;
    const job = {
      op: 'record' as const,
      transaction_tag: tag,
      account_tag: accountTag,
      source: '1',
      destination: '391234',
      source_ip: null,
      carrier_ip: carrierIp,
      tags: null,
      destination_account_tag: null,
      timestamp_auth: null,
    };
    const answer = await record(
      deps,
      {
        ...job,
        timestamp_begin: new Date(t0).toISOString(),
        timestamp_end: new Date(t0 + (units + late) * 1000).toISOString(),
        deadline: Date.now() + 10_000,
      },
      { id: `rec-${tag}`, deadline: Date.now() + 10_000 },
    );
    expect(answer).toMatchObject({ ok: true });
    return ctx.mongo.collections.accounts.findOne({ account_tag: accountTag });
  };

  it('the grant holds on every carrier the answer lists (the dearest decides)', async () => {
    const answer = await authorize(deps, authorizationJob('prepaid'));
    expect(answer.authorized).toBe(true);
    expect(answer.carriers).toEqual(['UDP:10.0.0.1:5060', 'UDP:10.0.0.2:5060']);
    // c1 answered 503; the call runs on c2 and is cut up to 1.99 s after the grant.
    const after = await cutCost('prepaid', answer.max_available_units, '10.0.0.2:5060', 1.99);
    expect(after!.balance).toBeGreaterThanOrEqual(0n);
  });

  it('the grant holds for a linked parent billed on the carrier that answered', async () => {
    const answer = await authorize(deps, authorizationJob('kid'));
    expect(answer.authorized).toBe(true);
    const after = await cutCost('kid', answer.max_available_units, '10.0.0.2:5060', 1.99);
    expect(after!.balance).toBeGreaterThan(0n);
    expect((await ctx.mongo.collections.accounts.findOne({ account_tag: 'reseller' }))!.balance).toBeGreaterThanOrEqual(0n);
  });

  it('a linked parent is billed on the carrier the caller went out on when the proxy sends no carrier_ip, as the grant assumed', async () => {
    const answer = await authorize(deps, authorizationJob('c1kid'));
    expect(answer).toMatchObject({ authorized: true, carriers: ['UDP:10.0.0.1:5060'] });
    await cutCost('c1kid', answer.max_available_units, null, 1.99);
    const parentRecord = await ctx.mongo.collections.transactions.findOne({ account_tag: 'c2parent' });
    expect(parentRecord!.destination_rate).toMatchObject({ carrier_tag: 'c1', rate: 60 });
    expect((await ctx.mongo.collections.accounts.findOne({ account_tag: 'c2parent' }))!.balance).toBeGreaterThanOrEqual(0n);
  });
});
