import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { announceRatingDataChange, RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { applyOnce, opIds } from '../../../src/shared/domain/ledger';
import { finishRerating } from '../../../src/shared/domain/ledger/rerate';
import { previewRerating, rerateJobId, startRerating, type RerateSelection } from '../../../src/shared/domain/rerating';
import { processRerateBatch, resumeReratings } from '../../../src/workers/rerating/batch';
import { record } from '../../../src/workers/transactions/record';
import { rollback } from '../../../src/workers/transactions/rollback';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { waitFor } from '../../support/agent-harness';
import { account, perSecondRating, runningEntry, seed } from '../../support/seed';

/**
 * Issue 34, part 2: rerating. Calls are recorded at 1 a second (60 per minute, 1 s steps, no connect
 * fee); the price then doubles (or is fixed back) and the calls are rated again: each record's fee is
 * corrected through the ledger exactly once per record per run, on every party, whatever is retried,
 * crashed midway or rolled back meanwhile. The batches run in this process (processRerateBatch), as a
 * worker runs them; a run's batches are 4 records, so a run takes several.
 */
describe('rerating', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const t0 = Date.now() - 3_600_000;
  const jobs = callJobs(t0);
  const window: RerateSelection = {
    from: new Date(t0 - 60_000),
    to: new Date(),
    account_tags: null,
    pricelist_tag: null,
    carrier_tag: null,
    prefix: null,
  };
  const accounts = () => ctx.mongo.collections.accounts;
  const transactions = () => ctx.mongo.collections.transactions;
  const balance = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.balance;
  const feeOf = async (tag: string, txTag: string) => (await transactions().findOne({ account_tag: tag, transaction_tag: txTag }))!.fee;
  let jobCount = 0;
  const run = async <J extends { deadline: number }, R>(
    fn: (d: TransactionDeps, job: J, r: { id: string; deadline: number }) => Promise<R>,
    job: J,
  ) => fn(deps, job, { id: `job-${++jobCount}`, deadline: job.deadline });
  const setPrice = async (perMinute: number) => {
    await ctx.mongo.collections.rates.updateMany({}, { $set: { rate: perMinute } });
    await announceRatingDataChange(ctx);
    rating.invalidate();
  };
  /** Runs a rerating to its end as the workers would, batch after batch. */
  const rerate = async (selection: RerateSelection = window) => {
    const started = await startRerating(ctx.mongo.collections, ctx.queues.imports, selection, { batchSize: 4 });
    for (let batch = 0; batch < 100; batch++) {
      await processRerateBatch(deps, { rerating_id: started._id, batch });
      const doc = await ctx.mongo.collections.reratings.findOne({ _id: started._id });
      if (doc!.state === 'done') return doc!;
    }
    throw new Error('rerating did not finish');
  };
  const audit = async () => expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating('39', 0),
      accounts: [
        account('caller', { balance: 10_000n, linked_accounts: ['parent'] }),
        account('parent', { type: 'POSTPAID', balance: 0n }),
        account('small', { balance: 100n }),
        account('racer', { balance: 10_000n }),
        account('late', { balance: 10_000n }),
        account('gone', { balance: 10_000n }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
    for (let i = 0; i < 10; i++) expect(await run(record, jobs.record(`c${i}`, 'caller', 60))).toMatchObject({ ok: true });
    expect(await run(record, jobs.record('s1', 'small', 90))).toMatchObject({ ok: true });
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('a dry run says what would change, per account and with the biggest changes, and changes nothing', async () => {
    await setPrice(120);
    const preview = await previewRerating(ctx.mongo.collections, await rating.index(), window, 3);
    expect(preview).toMatchObject({ records: 21, changed: 21, unchanged: 0, unrated: 0, difference: 1290n });
    expect(preview.accounts).toEqual([
      { account_tag: 'caller', records: 10, difference: 600n },
      { account_tag: 'parent', records: 10, difference: 600n },
      { account_tag: 'small', records: 1, difference: 90n },
    ]);
    expect(preview.sample).toHaveLength(3);
    expect(preview.sample[0]).toMatchObject({ account_tag: 'small', fee_before: 90n, fee_after: 180n });
    expect(await feeOf('caller', 'c0')).toBe(60n);
    expect(await balance('caller')).toBe(9_400n);
  });

  it('a run corrects every record on every party once, keeps each record history, and may take a prepaid balance below zero', async () => {
    const done = await rerate();
    expect(done).toMatchObject({ counts: { seen: 21, changed: 21, unchanged: 0, skipped: 0 }, difference: 1290n, batch: 6 });
    expect(await balance('caller')).toBe(8_800n);
    expect(await balance('parent')).toBe(-1_200n);
    expect(await balance('small')).toBe(-80n);
    const rec = await transactions().findOne({ account_tag: 'caller', transaction_tag: 'c0' });
    expect(rec).toMatchObject({ fee: 120n, destination_rate: expect.objectContaining({ rate: 120 }) });
    expect(rec!.reratings).toEqual([{ run: done._id, at: expect.any(Date), fee_before: 60n, fee_after: 120n }]);
    // The prepaid account now below zero is told so (the alert is queued beside the batch, not awaited by it).
    const negative = async () =>
      (await ctx.queues.alerts.getJobs(['waiting', 'completed', 'active', 'delayed', 'failed'])).some(
        (j) => j.data.kind === 'NEGATIVE_BALANCE' && j.data.account_tag === 'small',
      );
    expect(await waitFor(negative, 'the NEGATIVE_BALANCE alert of small', 10_000)).toBe(true);
    await audit();
  });

  it('a batch job delivered again, or a stale one, corrects nothing twice', async () => {
    const before = await balance('caller');
    const last = await ctx.mongo.collections.reratings.find().sort({ created_at: -1 }).limit(1).next();
    for (let batch = 0; batch < 6; batch++) await processRerateBatch(deps, { rerating_id: last!._id, batch });
    expect(await balance('caller')).toBe(before);
    expect(await ctx.mongo.collections.ledger.countDocuments({ kind: 'rerate' })).toBe(21);
  });

  it('a second run (the price fixed back) corrects again, once, and the history keeps both', async () => {
    await setPrice(60);
    const done = await rerate({ ...window, account_tags: ['caller', 'parent'] });
    expect(done).toMatchObject({ counts: { seen: 20, changed: 20 }, difference: -1200n });
    expect(await balance('caller')).toBe(9_400n);
    expect(await balance('parent')).toBe(-600n);
    const rec = await transactions().findOne({ account_tag: 'parent', transaction_tag: 'c3' });
    expect(rec!.reratings!.map((r) => [r.fee_before, r.fee_after])).toEqual([
      [60n, 120n],
      [120n, 60n],
    ]);
    await audit();
  });

  it('crashed midway (intent written; then also the ledger moved): the run finishes the record once', async () => {
    await setPrice(60);
    expect(await run(record, jobs.record('x1', 'racer', 30))).toMatchObject({ ok: true });
    expect(await run(record, jobs.record('x2', 'racer', 30))).toMatchObject({ ok: true });
    await setPrice(90);
    const selection = { ...window, account_tags: ['racer'] };
    const started = await startRerating(ctx.mongo.collections, ctx.queues.imports, selection, { batchSize: 4 });
    const [r1, r2] = await transactions().find({ account_tag: 'racer' }).sort({ transaction_tag: 1 }).toArray();
    // x1: its intent written, nothing else. x2: intent and ledger, not the record.
    const intent = (fee_before: bigint) => ({ run: started._id, at: new Date(), fee_before, fee_after: 45n, rate: null, segments: null });
    await transactions().updateOne({ _id: r1._id }, { $set: { rerate: intent(30n) } });
    await transactions().updateOne({ _id: r2._id }, { $set: { rerate: intent(30n) } });
    await applyOnce(ctx.mongo.collections, {
      op: opIds.rerate(started._id, r2._id),
      account_tag: 'racer',
      amount: -15n,
      kind: 'rerate',
      transaction_tag: 'x2',
      ref: r2._id,
    });
    await processRerateBatch(deps, { rerating_id: started._id, batch: 0 });
    expect(await feeOf('racer', 'x1')).toBe(45n);
    expect(await feeOf('racer', 'x2')).toBe(45n);
    expect(await balance('racer')).toBe(10_000n - 90n);
    expect(await ctx.mongo.collections.reratings.findOne({ _id: started._id })).toMatchObject({
      state: 'done',
      counts: { changed: 2 },
      difference: 30n,
    });
    await audit();
  });

  it("an account deleted between a record's intent and its correction: the intent is dropped, the record keeps its fee", async () => {
    await setPrice(60);
    expect(await run(record, jobs.record('g1', 'gone', 30))).toMatchObject({ ok: true });
    const r = (await transactions().findOne({ account_tag: 'gone', transaction_tag: 'g1' }))!;
    const intent = { run: 'run-gone', at: new Date(), fee_before: 30n, fee_after: 45n, rate: null, segments: null };
    await transactions().updateOne({ _id: r._id }, { $set: { rerate: intent } });
    await accounts().deleteOne({ account_tag: 'gone' });
    try {
      expect(await finishRerating(ctx.mongo.collections, { ...r, rerate: intent })).toEqual({ outcome: 'no-account' });
      const after = (await transactions().findOne({ _id: r._id }))!;
      // No correction reached a ledger, so the record claims none: its fee, no history, no intent left.
      expect(after.fee).toBe(30n);
      expect(after.reratings ?? []).toEqual([]);
      expect(after.rerate ?? null).toBeNull();
      expect(await ctx.mongo.collections.ledger.countDocuments({ _id: opIds.rerate('run-gone', r._id) })).toBe(0);
    } finally {
      // What a deletion through the API would have closed: out of the other tests' audits.
      await transactions().deleteOne({ _id: r._id });
      await ctx.mongo.collections.ledger.deleteMany({ account_tag: 'gone' });
    }
  });

  it('a record read by a run, whose account is deleted and its tag given to a new customer before the correction: nothing is charged to the new customer', async () => {
    await setPrice(60);
    await seed(ctx, { accounts: [account('reused', { balance: 10_000n })] });
    expect(await run(record, jobs.record('old-call', 'reused', 30))).toMatchObject({ ok: true });
    const seen = (await transactions().findOne({ account_tag: 'reused', transaction_tag: 'old-call' }))!;
    // The deletion marks the old customer's records (closeAccount), and the tag goes to a new customer.
    await transactions().updateOne({ _id: seen._id }, { $set: { closed_account: 'old-customer-id' } });
    await accounts().deleteOne({ account_tag: 'reused' });
    await seed(ctx, { accounts: [account('reused', { balance: 500n })] });
    const { rerateRecord } = await import('../../../src/shared/domain/ledger');
    try {
      expect(
        await rerateRecord(ctx.mongo.collections, seen, 'run-reused', { fee: 45n, rate: seen.destination_rate, segments: null }),
      ).toEqual({
        outcome: 'skipped',
      });
      expect(await balance('reused')).toBe(500n);
      expect(await ctx.mongo.collections.ledger.countDocuments({ _id: opIds.rerate('run-reused', seen._id) })).toBe(0);
    } finally {
      await transactions().deleteOne({ _id: seen._id });
      await accounts().deleteOne({ account_tag: 'reused' });
      await ctx.mongo.collections.ledger.deleteMany({ account_tag: 'reused' });
    }
  });

  it('crashed after correcting records whole, before the run moved: the retry counts them changed, once', async () => {
    await setPrice(60);
    for (const tag of ['z1', 'z2', 'z3']) expect(await run(record, jobs.record(tag, 'racer', 30))).toMatchObject({ ok: true });
    await setPrice(90);
    const started = await startRerating(
      ctx.mongo.collections,
      ctx.queues.imports,
      { ...window, prefix: null, account_tags: ['racer'] },
      { batchSize: 50 },
    );
    const z1 = (await transactions().findOne({ account_tag: 'racer', transaction_tag: 'z1' }))!;
    // A first attempt corrected z1 whole (intent, ledger, record) and died before moving the run.
    const { rerateRecord } = await import('../../../src/shared/domain/ledger');
    expect(
      await rerateRecord(ctx.mongo.collections, z1, started._id, { fee: 45n, rate: z1.destination_rate, segments: null }),
    ).toMatchObject({
      outcome: 'changed',
    });
    await processRerateBatch(deps, { rerating_id: started._id, batch: 0 });
    const done = await ctx.mongo.collections.reratings.findOne({ _id: started._id });
    expect(done).toMatchObject({ state: 'done', counts: { changed: 3, skipped: 0 }, difference: 45n });
    expect(await ctx.mongo.collections.ledger.countDocuments({ _id: { $regex: `^rerate:${started._id}:` } })).toBe(3);
    await audit();
  });

  it('a rollback that meets a rerating under way finishes it, then refunds the corrected fee: the call nets zero', async () => {
    expect(await run(record, jobs.record('y1', 'racer', 40))).toMatchObject({ ok: true });
    const before = await balance('racer');
    const rec = await transactions().findOne({ account_tag: 'racer', transaction_tag: 'y1' });
    expect(rec!.fee).toBe(60n);
    await transactions().updateOne(
      { _id: rec!._id },
      { $set: { rerate: { run: 'r-race', at: new Date(), fee_before: 60n, fee_after: 80n, rate: null, segments: null } } },
    );
    expect(await run(rollback, jobs.rollback('y1', 'racer'))).toMatchObject({ ok: true });
    expect(await balance('racer')).toBe(before + 60n);
    expect(await ctx.mongo.collections.ledger.findOne({ _id: opIds.refund(rec!._id) })).toMatchObject({ amount: 80n });
    await audit();
  });

  it('an imported record whose batch debit is not in the ledger (still settling, or taken back) is left alone', async () => {
    const base = (await transactions().findOne({ account_tag: 'small', transaction_tag: 's1' }))!;
    await transactions().insertOne({
      ...base,
      _id: 'ghost-record',
      transaction_tag: 'ghost',
      state: 'imported',
      charge_op: 'ghost-batch',
      reratings: [],
    });
    const before = await balance('small');
    await setPrice(240);
    const done = await rerate({ ...window, account_tags: ['small'] });
    expect(await feeOf('small', 'ghost')).toBe(base.fee);
    expect(done.counts).toMatchObject({ seen: 2, changed: 1, skipped: 1 });
    expect(await balance('small')).toBe(before - (360n - base.fee));
    await transactions().deleteOne({ _id: 'ghost-record' });
  });

  it('a call charged by its end whose charged mark is not written yet (pending, its charge in the ledger) is corrected too, once', async () => {
    // An end that charges in its own write marks the record charged after its answer, up to 200 ms later
    // (docs/DECISIONS.md, "A charged mark waits for company"); a run passing it meanwhile must not miss it.
    await setPrice(60);
    expect(await run(record, jobs.record('late-mark', 'late', 60))).toMatchObject({ ok: true });
    const charged = (await transactions().findOne({ account_tag: 'late', transaction_tag: 'late-mark' }))!;
    await transactions().updateOne(
      { _id: charged._id, account_tag: 'late' },
      { $set: { state: 'pending', charged_by: 'processing' }, $unset: { record_job: '', record_deadline: '' } },
    );
    const before = await balance('late');
    const fee = charged.fee;
    await setPrice(120);
    const done = await rerate({ ...window, account_tags: ['late'] });
    const after = (await transactions().findOne({ _id: charged._id, account_tag: 'late' }))!;
    expect(after.state).toBe('charged');
    expect(after.fee).toBe(fee * 2n);
    expect(await balance('late')).toBe(before - fee);
    expect(done.counts.changed).toBeGreaterThanOrEqual(1);
    // The run's total counted it among the records it would see (a progress of seen / total ends at 1).
    expect(done.total).toBe(done.counts.seen);
    // Again: nothing more to correct on it.
    await rerate({ ...window, account_tags: ['late'] });
    expect(await balance('late')).toBe(before - fee);
    await audit();
  });

  it('a recordTransaction record decided done but not marked charged yet (a worker killed after the decision) is settled and corrected, once', async () => {
    await setPrice(60);
    expect(await run(record, jobs.record('decided', 'late', 60))).toMatchObject({ ok: true });
    const jobId = `job-${jobCount}`;
    expect(await ctx.mongo.collections.outcomes.findOne({ _id: jobId })).toMatchObject({ state: 'done' });
    const charged = (await transactions().findOne({ account_tag: 'late', transaction_tag: 'decided' }))!;
    // Killed after the decision, before the charged mark; its agent is still within its deadline.
    await transactions().updateOne(
      { _id: charged._id, account_tag: 'late' },
      { $set: { state: 'pending', charged_by: 'record', record_job: jobId, record_deadline: Date.now() + 60_000 } },
    );
    const before = await balance('late');
    await setPrice(120);
    const done = await rerate({ ...window, account_tags: ['late'] });
    const after = (await transactions().findOne({ _id: charged._id, account_tag: 'late' }))!;
    expect(after).toMatchObject({ state: 'charged', fee: charged.fee * 2n });
    expect(await balance('late')).toBe(before - charged.fee);
    expect(done.counts.changed).toBeGreaterThanOrEqual(1);
    await rerate({ ...window, account_tags: ['late'] });
    expect(await balance('late')).toBe(before - charged.fee);
    await audit();
  });

  it('a pending record whose call is still being charged (its entry on the account) is counted skipped, not passed over', async () => {
    const { accounts: accts } = ctx.mongo.collections;
    expect(await run(record, jobs.record('in-flight', 'late', 60))).toMatchObject({ ok: true });
    const charged = (await transactions().findOne({ account_tag: 'late', transaction_tag: 'in-flight' }))!;
    await transactions().updateOne(
      { _id: charged._id, account_tag: 'late' },
      { $set: { state: 'pending', charged_by: 'processing' }, $unset: { record_job: '', record_deadline: '' } },
    );
    // The entry processing would be charging: named by the record's id.
    await accts.updateOne(
      { account_tag: 'late' },
      { $push: { running_transactions: runningEntry('in-flight', { origin_account_tag: 'late', id: charged._id }) } },
    );
    await setPrice(60);
    const done = await rerate({ ...window, account_tags: ['late'] });
    expect(done.counts.skipped).toBeGreaterThanOrEqual(1);
    expect((await transactions().findOne({ _id: charged._id, account_tag: 'late' }))!.fee).toBe(charged.fee);
    await accts.updateOne({ account_tag: 'late' }, { $pull: { running_transactions: { id: charged._id } } });
    await transactions().updateOne({ _id: charged._id, account_tag: 'late' }, { $set: { state: 'charged' } });
  });

  it('a run whose job was lost (Redis) is queued again by the recovery sweep, from MongoDB alone', async () => {
    const started = await startRerating(ctx.mongo.collections, ctx.queues.imports, { ...window, account_tags: ['small'] });
    await (await ctx.queues.imports.getJob(rerateJobId(started._id, 0)))!.remove();
    expect(await ctx.queues.imports.getJob(rerateJobId(started._id, 0))).toBeUndefined();
    expect(await resumeReratings(deps, 0, new Date(Date.now() + 1000))).toBeGreaterThanOrEqual(1);
    expect(await ctx.queues.imports.getJob(rerateJobId(started._id, 0))).toBeDefined();
  });
});
