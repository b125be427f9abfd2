import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import type { ProcessingJob } from '../../../src/shared/domain/queues/payloads';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { decideAbandoned } from '../../../src/shared/domain/calls/decisions';
import { opIds, SettledMarkers } from '../../../src/shared/domain/ledger';
import { callId } from '../../../src/shared/domain/types';
import { begin } from '../../../src/workers/transactions/begin';
import { BegunEntries } from '../../../src/workers/transactions/begun-entries';
import { DecisionMemory } from '../../../src/workers/transactions/decision-memory';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { end, endCall, processingJobId } from '../../../src/workers/transactions/end';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { recordOfEntry } from '../../../src/workers/transactions/records';
import { rollback } from '../../../src/workers/transactions/rollback';
import { callJobs } from '../../support/call-jobs';
import { waitFor } from '../../support/agent-harness';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * Issue 36: a single-party call's end, in the process that began it, ends and charges the call in one
 * write (src/workers/transactions/end-charge.ts): the pending record first, then the write that removes
 * the entry and debits the fee with its marker, then, after the answer, the ledger entry and the charged
 * mark. Each test stops it where a crash, an abandonment or a rollback can come in between, and checks
 * that the call is charged exactly once, at its own end, and that every answer is true. Rates: a call
 * of n seconds costs n + 1.
 */
describe('an end that charges in its own write', () => {
  let ctx: TestContext;
  let rating: RatingDataCache;
  /** A worker process's deps: with the entries it began, the decisions it made and its settled markers. */
  let worker: TransactionDeps;
  /** Another worker process: it remembers nothing. */
  let other: TransactionDeps;
  /** Another worker process of the same deployment, charging in the end's write too: it began nothing. */
  let elsewhere: TransactionDeps;
  const accounts = () => ctx.mongo.collections.accounts;
  const transactions = () => ctx.mongo.collections.transactions;
  const ledger = () => ctx.mongo.collections.ledger;
  const balance = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.balance;
  const entryOf = async (tag: string, call: string) =>
    (await accounts().findOne({ account_tag: tag }))!.running_transactions.find((e) => e.transaction_tag === call);
  const jobs = callJobs(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const ok = { ok: true, reason: null };
  let n = 0;
  const ref = () => ({ id: `job-${++n}`, deadline: Date.now() + 10_000 });
  const audit = async () => {
    const report = await auditLedger(ctx.mongo.collections, { recheckPauseMs: 50 });
    return { differences: report.differences, calls: report.calls };
  };
  const clean = { differences: [], calls: [] };
  /**
   * A call begun on `a`, and a pending record of it that an end wrote and never charged (`endedAt`
   * seconds, by `endJob`; `id` for another entry's record of the tag): what a killed end leaves.
   */
  const begunWithPendingRecord = async (tag: string, endedAt: number, endJob: string, id?: string) => {
    expect(await begin(worker, jobs.begin(tag, 'a'), ref())).toEqual(ok);
    const entry = (await entryOf('a', tag))!;
    const pending = recordOfEntry('a', {
      ...entry,
      ...(id ? { id } : {}),
      in_progress: false,
      timestamp_end: new Date(jobs.at(endedAt)),
      end_job: endJob,
    });
    await transactions().insertOne(pending);
    return entry;
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating(),
      accounts: [
        account('a', { balance: 1000n }),
        account('p', { balance: 1000n, type: 'POSTPAID' }),
        account('parent', { balance: 1000n }),
        account('child', { balance: 1000n, linked_accounts: ['parent'] }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    worker = {
      ctx,
      rating,
      decisions: new DecisionMemory(),
      settledMarkers: new SettledMarkers(),
      begunEntries: new BegunEntries(),
      processInline: true,
    };
    other = { ctx, rating };
    elsewhere = { ...worker, decisions: new DecisionMemory(), settledMarkers: new SettledMarkers(), begunEntries: new BegunEntries() };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it.each([
    ['in the process that began the call', 'c1', () => worker],
    ["in another worker process, which began nothing: it reads the call's entry", 'e1', () => elsewhere],
  ])(
    'charges the fee once in the write that ends the call, %s; the rest follows the answer, and no processing job is queued',
    async (_, tag, ender) => {
      const before = await balance('a');
      expect(await begin(worker, jobs.begin(tag, 'a'), ref())).toEqual(ok);
      const entry = (await entryOf('a', tag))!;
      const ended = await endCall(ender(), jobs.end(tag, 'a', 10), ref());
      expect(ended.result).toEqual(ok);
      expect(ended.toProcess).toEqual([]);
      // Answered: the entry is gone and the fee taken, the record written before the charge is pending.
      expect(await entryOf('a', tag)).toBeUndefined();
      expect(await balance('a')).toBe(before - 11n);
      expect(await transactions().findOne({ _id: entry.id })).toMatchObject({ state: 'pending', fee: 11n, duration: 10 });
      await ended.afterAnswer!();
      expect(await ledger().findOne({ _id: opIds.charge(entry.id) })).toMatchObject({ amount: -11n, kind: 'charge' });
      // The charged mark waits a moment for another record write to travel with, then goes alone.
      await waitFor(() => transactions().findOne({ _id: entry.id, state: 'charged', fee: 11n }), 'the charged mark');
      expect(await ctx.queues.processing.getJob(processingJobId(entry.id))).toBeUndefined();
      // A second end of the call, in the process that began it (which still holds the entry when another
      // process ended the call): it has ended.
      expect((await endCall(worker, jobs.end(tag, 'a', 20), ref())).result).toEqual({ ok: false, reason: 'ALREADY_ENDED' });
      expect(await balance('a')).toBe(before - 11n);
      expect(await audit()).toEqual(clean);
    },
  );

  it('a postpaid call too', async () => {
    const before = await balance('p');
    expect(await begin(worker, jobs.begin('c1p', 'p'), ref())).toEqual(ok);
    const ended = await endCall(worker, jobs.end('c1p', 'p', 4), ref());
    expect(ended.afterAnswer).toBeDefined();
    await ended.afterAnswer!();
    expect(await balance('p')).toBe(before - 5n);
  });

  it('run again in another process after its write (stopped before answering), it answers ok and charges nothing more', async () => {
    const before = await balance('a');
    expect(await begin(worker, jobs.begin('c2', 'a'), ref())).toEqual(ok);
    const entry = (await entryOf('a', 'c2'))!;
    const endRef = ref();
    expect((await endCall(worker, jobs.end('c2', 'a', 30), endRef)).result).toEqual(ok);
    // The process dies here: no ledger entry, the record pending, the marker on the account.
    const rerun = await endCall(other, jobs.end('c2', 'a', 30), endRef);
    expect(rerun.result).toEqual(ok);
    expect(rerun.toProcess).toEqual([]);
    expect(await balance('a')).toBe(before - 31n);
    expect(await transactions().findOne({ _id: entry.id })).toMatchObject({ state: 'charged', fee: 31n });
    expect(await ledger().countDocuments({ _id: opIds.charge(entry.id) })).toBe(1);
    expect(await audit()).toEqual(clean);
  });

  it("the agent's abandonment after the write finds the end done, and one before it keeps the end from charging", async () => {
    expect(await begin(worker, jobs.begin('c3', 'a'), ref())).toEqual(ok);
    const late = ref();
    expect((await endCall(worker, jobs.end('c3', 'a', 5), late)).result).toEqual(ok);
    const store = ctx.mongo.collections;
    const afterWrite = await decideAbandoned(store, { jobId: late.id, op: 'end', account_tag: 'a', transaction_tag: 'c3' });
    expect(afterWrite).toMatchObject({ won: false, doc: { state: 'done' } });

    const before = await balance('a');
    expect(await begin(worker, jobs.begin('c4', 'a'), ref())).toEqual(ok);
    const entry = (await entryOf('a', 'c4'))!;
    const early = ref();
    expect(await decideAbandoned(store, { jobId: early.id, op: 'end', account_tag: 'a', transaction_tag: 'c4' })).toMatchObject({
      won: true,
    });
    const fenced = await endCall(worker, jobs.end('c4', 'a', 5), early);
    expect(fenced.result.ok).toBe(false);
    expect(fenced.afterAnswer).toBeUndefined();
    expect(await balance('a')).toBe(before);
    expect(await entryOf('a', 'c4')).toMatchObject({ id: entry.id, in_progress: true });
    expect(await transactions().countDocuments({ transaction_tag: 'c4' })).toBe(0);
    worker.begunEntries!.remember('a', entry);
    // Between the record and the write: the record alone is no decision, so the abandonment wins.
    const between = ref();
    await transactions().insertOne(
      recordOfEntry('a', { ...entry, in_progress: false, timestamp_end: new Date(jobs.at(6)), end_job: between.id }),
    );
    expect(await decideAbandoned(store, { jobId: between.id, op: 'end', account_tag: 'a', transaction_tag: 'c4' })).toMatchObject({
      won: true,
    });
    expect((await endCall(worker, jobs.end('c4', 'a', 6), between)).result.ok).toBe(false);
    expect(await balance('a')).toBe(before);
    // The proxy's next end of the call charges it, at its own end.
    expect(await end(other, jobs.end('c4', 'a', 7), ref())).toEqual(ok);
    const queued = await ctx.queues.processing.getJob(processingJobId(entry.id));
    expect((await processEndedCall(other, queued!.data as ProcessingJob)).outcome).toBe('charged');
    expect(await balance('a')).toBe(before - 8n);
    expect(await audit()).toEqual(clean);
  });

  it('a pending record left by an end killed before its write is replaced: the call is charged at the end that ends it', async () => {
    for (const [tag, by] of [
      ['c5', 'the process that began the call'],
      ['c5r', 'another worker process, which reads the entry'],
      ['c6', 'a process whose processing runs elsewhere'],
    ] as const) {
      const before = await balance('a');
      // The killed end's record: 100 s, by a job that never made its write.
      const entry = await begunWithPendingRecord(tag, 100, 'killed');
      if (by !== 'a process whose processing runs elsewhere') {
        const ended = await endCall(by === 'the process that began the call' ? worker : elsewhere, jobs.end(tag, 'a', 10), ref());
        expect(ended.result).toEqual(ok);
        await ended.afterAnswer!();
      } else {
        // Ended, then charged by processing.
        expect(await end(other, jobs.end(tag, 'a', 10), ref())).toEqual(ok);
        const queued = await ctx.queues.processing.getJob(processingJobId(entry.id));
        expect((await processEndedCall(other, queued!.data as ProcessingJob)).outcome).toBe('charged');
      }
      expect(await balance('a')).toBe(before - 11n);
      await waitFor(() => transactions().findOne({ _id: entry.id, state: 'charged', fee: 11n, duration: 10 }), 'the charged record');
    }
    expect(await audit()).toEqual(clean);
  });

  it('an end sent again to a process that holds the entry again (its begin run again) never takes away the charged record', async () => {
    // The chaos run of 2026-11-27 (seed 471265): an acknowledged end's call held no record afterwards,
    // its fee in the ledger. The first end charged and answered; before its record was marked charged,
    // the process held the entry again (its begin run again after a worker or Redis fault) and a second
    // end of the call (re-sent by the proxy) replaced the pending record as if a killed end had left it,
    // missed its own write (the entry was gone), and deleted the record it had replaced.
    const before = await balance('a');
    expect(await begin(worker, jobs.begin('c8', 'a'), ref())).toEqual(ok);
    const entry = (await entryOf('a', 'c8'))!;
    const first = await endCall(worker, jobs.end('c8', 'a', 20), ref());
    expect(first.result).toEqual(ok);
    // The first end's answer is out; the rest of its charge (ledger entry, charged mark) has not run yet.
    worker.begunEntries!.remember('a', entry);
    const again = await endCall(worker, jobs.end('c8', 'a', 25), ref());
    expect(again.result).toEqual({ ok: false, reason: 'ALREADY_ENDED' });
    await first.afterAnswer!();
    expect(await balance('a')).toBe(before - 21n);
    await waitFor(
      () => transactions().findOne({ _id: entry.id, state: 'charged', fee: 21n, duration: 20 }),
      "the first end's record, charged",
    );
    expect(await audit()).toEqual(clean);
  });

  it("an end that replaced a killed end's record and then misses its write puts that record back; the next end charges once", async () => {
    const before = await balance('a');
    const entry = await begunWithPendingRecord('c9', 100, 'killed');
    // The agent gave up on this end before it ran: its write cannot apply.
    const fenced = ref();
    await decideAbandoned(ctx.mongo.collections, { jobId: fenced.id, op: 'end', account_tag: 'a', transaction_tag: 'c9' });
    expect((await endCall(worker, jobs.end('c9', 'a', 10), fenced)).result.ok).toBe(false);
    expect(await transactions().findOne({ _id: entry.id })).toMatchObject({ state: 'pending', end_job: 'killed', duration: 100 });
    expect(await balance('a')).toBe(before);
    // The call's next end (sent again by the proxy) ends and charges it, once.
    worker.begunEntries!.remember('a', entry);
    const ended = await endCall(worker, jobs.end('c9', 'a', 10), ref());
    expect(ended.result).toEqual(ok);
    await ended.afterAnswer!();
    expect(await balance('a')).toBe(before - 11n);
    await waitFor(() => transactions().findOne({ _id: entry.id, state: 'charged', fee: 11n, duration: 10 }), 'the charged record');
    expect(await audit()).toEqual(clean);
  });

  it("processing is not kept from charging by another entry's pending record of the tag that was never charged", async () => {
    // An end that took a kept entry of an earlier use of the tag (rolled back in another process) writes
    // that entry's record pending, misses its write and deletes it: meanwhile it holds the tag's key, and
    // processing of the call that did end must not take it for the call's record and drop its entry uncharged.
    const before = await balance('a');
    const entry = await begunWithPendingRecord('c10', 5, 'x', 'earlier-use');
    worker.begunEntries!.take('a', callId('a', 'c10'));
    expect(await end(worker, jobs.end('c10', 'a', 10), ref())).toEqual(ok);
    const queued = await ctx.queues.processing.getJob(processingJobId(entry.id));
    expect((await processEndedCall(worker, queued!.data as ProcessingJob)).outcome).toBe('charged');
    expect(await balance('a')).toBe(before - 11n);
    expect(await transactions().findOne({ _id: 'earlier-use' })).toBeNull();
    await waitFor(() => transactions().findOne({ _id: entry.id, state: 'charged', fee: 11n }), 'the charged record');
    expect(await audit()).toEqual(clean);
  });

  it('a rollback between the write and the rest of the charge refunds once; the rest does not bring the record back', async () => {
    const before = await balance('a');
    expect(await begin(worker, jobs.begin('c7', 'a'), ref())).toEqual(ok);
    const entry = (await entryOf('a', 'c7'))!;
    const ended = await endCall(worker, jobs.end('c7', 'a', 20), ref());
    expect(ended.result).toEqual(ok);
    expect(await rollback(worker, jobs.rollback('c7', 'a'), ref())).toEqual(ok);
    await ended.afterAnswer!();
    expect(await balance('a')).toBe(before);
    expect(await transactions().countDocuments({ transaction_tag: 'c7' })).toBe(0);
    expect(await ledger().countDocuments({ _id: { $in: [opIds.charge(entry.id), opIds.refund(entry.id)] } })).toBe(2);
    // A second rollback finds nothing left to take.
    expect(await rollback(worker, jobs.rollback('c7', 'a'), ref())).toEqual({ ok: false, reason: 'NOT_FOUND' });
    expect(await audit()).toEqual(clean);
  });

  it('the same end job run again by the process that began the call (delivered again) answers ok and charges nothing more', async () => {
    const before = await balance('a');
    expect(await begin(worker, jobs.begin('e2', 'a'), ref())).toEqual(ok);
    const entry = (await entryOf('a', 'e2'))!;
    const endRef = ref();
    const first = await endCall(elsewhere, jobs.end('e2', 'a', 7), endRef);
    expect(first.result).toEqual(ok);
    // That process dies before the rest of the charge; the job runs again where the call began.
    const rerun = await endCall(worker, jobs.end('e2', 'a', 7), endRef);
    expect(rerun.result).toEqual(ok);
    expect(rerun.toProcess).toEqual([]);
    await rerun.afterAnswer?.();
    expect(await balance('a')).toBe(before - 8n);
    expect(await ledger().countDocuments({ _id: opIds.charge(entry.id) })).toBe(1);
    expect(await audit()).toEqual(clean);
  });

  it('an end the agent abandoned before it ran charges nothing in another worker process either', async () => {
    const before = await balance('a');
    expect(await begin(worker, jobs.begin('e3', 'a'), ref())).toEqual(ok);
    const entry = (await entryOf('a', 'e3'))!;
    const early = ref();
    const store = ctx.mongo.collections;
    expect(await decideAbandoned(store, { jobId: early.id, op: 'end', account_tag: 'a', transaction_tag: 'e3' })).toMatchObject({
      won: true,
    });
    const fenced = await endCall(elsewhere, jobs.end('e3', 'a', 5), early);
    expect(fenced.result.ok).toBe(false);
    expect(fenced.afterAnswer).toBeUndefined();
    expect(await balance('a')).toBe(before);
    expect(await entryOf('a', 'e3')).toMatchObject({ id: entry.id, in_progress: true });
    expect(await transactions().countDocuments({ transaction_tag: 'e3' })).toBe(0);
    // The proxy's next end, in the same process, charges the call once, at its own end.
    const next = await endCall(elsewhere, jobs.end('e3', 'a', 6), ref());
    expect(next.result).toEqual(ok);
    await next.afterAnswer!();
    expect(await balance('a')).toBe(before - 7n);
    expect(await audit()).toEqual(clean);
  });

  it('a call with a linked parent ended in another worker process: ended the long way, every party charged once', async () => {
    const child = await balance('child');
    const parent = await balance('parent');
    expect(await begin(worker, jobs.begin('e4', 'child'), ref())).toEqual(ok);
    const ended = await endCall(elsewhere, jobs.end('e4', 'child', 9), ref());
    expect(ended.result).toEqual(ok);
    expect(ended.afterAnswer).toBeUndefined();
    expect(ended.toProcess.map((j) => j.account_tag).sort()).toEqual(['child', 'parent']);
    for (const job of ended.toProcess) expect((await processEndedCall(elsewhere, job)).outcome).toBe('charged');
    expect(await balance('child')).toBe(child - 10n);
    expect(await balance('parent')).toBe(parent - 10n);
    expect(await audit()).toEqual(clean);
  });
});
