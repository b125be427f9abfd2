import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { decideAbandoned } from '../../../src/shared/domain/calls/decisions';
import type { RollbackJob } from '../../../src/shared/domain/calls';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { SCAN_SCHEDULER_ID } from '../../../src/workers/maintenance/schedule';
import { recoverInterrupted, takeoverAfterMs } from '../../../src/workers/maintenance/recover';
import { begin } from '../../../src/workers/transactions/begin';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { end } from '../../../src/workers/transactions/end';
import { record } from '../../../src/workers/transactions/record';
import { rollback } from '../../../src/workers/transactions/rollback';
import { startWorkers, WorkerPool } from '../../../src/workers/worker-pool';
import { AgentHarness, startAgentHarness, waitFor } from '../../support/agent-harness';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';
import { callQueueIdle } from '../../support/call-slots';
import { startWorkerProcess } from '../../support/processes';

/**
 * Issue 9, defects 7, 8 and 10: what a crash, a lost job or a late commit leaves behind is finished or
 * taken back, so that every answer the agent gave is true once the workers are done. The worker's
 * functions run in this process against the real servers, with the crash points set up by hand.
 */
describe('recovery: TIMEOUT is true, interrupted operations are finished or undone', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const accounts = () => ctx.mongo.collections.accounts;
  const transactions = () => ctx.mongo.collections.transactions;
  const balance = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.balance;
  const running = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.running_transactions;
  const now = () => Date.now();
  const jobs = callJobs(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const beginJob = (tag: string, accountTag: string, deadline: number) => jobs.begin(tag, accountTag, deadline);
  const endJob = (tag: string, accountTag: string, deadline: number) => jobs.end(tag, accountTag, 10, deadline);
  const recordJob = (tag: string, accountTag: string, deadline: number) => jobs.record(tag, accountTag, 10, deadline);
  /** A sweep run as if the takeover time had passed. */
  const sweepLater = () => recoverInterrupted(deps, new Date(now() + takeoverAfterMs(deps) + 60_000));

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating(),
      accounts: [
        account('kid', { balance: 1000n, linked_accounts: ['mum'] }),
        account('mum', { balance: 1000n }),
        account('rec', { balance: 1000n, linked_accounts: ['recmum'] }),
        account('recmum', { balance: 1000n }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('defect 8: a begin that commits after the agent answered TIMEOUT is taken back, on every party', async () => {
    // The agent gave up first and recorded it.
    await decideAbandoned(ctx.mongo.collections, { jobId: 'late-begin', op: 'begin', account_tag: 'kid', transaction_tag: 'b1' });
    const answer = await begin(deps, beginJob('b1', 'kid', now() + 10_000), { id: 'late-begin', deadline: now() + 10_000 });
    expect(answer).toEqual({ ok: false, reason: 'TIMEOUT' });
    expect(await running('kid')).toEqual([]);
    expect(await running('mum')).toEqual([]);
  });

  it('defect 8: a begin whose work ends past its deadline abandons itself and takes its entries back', async () => {
    const deadline = now() + 251; // inside the worker's 250 ms margin as soon as any work is done
    const answer = await begin(deps, beginJob('b2', 'kid', deadline), { id: 'slow-begin', deadline });
    expect(answer).toEqual({ ok: false, reason: 'TIMEOUT' });
    expect(await running('kid')).toEqual([]);
    expect(await running('mum')).toEqual([]);
    expect(await ctx.mongo.collections.outcomes.findOne({ _id: 'slow-begin' })).toMatchObject({ state: 'abandoned' });
  });

  it('defect 7: a worker killed in the middle of a multi-party begin: its re-run past the deadline undoes it; a lost job is undone by the sweep', async () => {
    // Crash point: the caller's entry is in, the parent's is not, no outcome.
    const deadline = now() + 10_000;
    await begin(deps, beginJob('b3', 'kid', deadline), { id: 'crashed-begin', deadline });
    await ctx.mongo.collections.outcomes.deleteOne({ _id: 'crashed-begin' });
    const parentEntry = (await running('mum'))[0];
    await accounts().updateOne({ account_tag: 'mum' }, { $pull: { running_transactions: { id: parentEntry.id } } });
    // The re-run comes after the lock expired, past the deadline: it finishes the begin, then abandons it.
    const rerun = await begin(deps, beginJob('b3', 'kid', deadline - 20_000), { id: 'crashed-begin', deadline: deadline - 20_000 });
    expect(rerun).toEqual({ ok: false, reason: 'TIMEOUT' });
    expect(await running('kid')).toEqual([]);
    expect(await running('mum')).toEqual([]);

    // The same crash point, but the job is lost with Redis: the sweep takes it back.
    await begin(deps, beginJob('b4', 'kid', now() + 10_000), { id: 'lost-begin', deadline: now() + 10_000 });
    await ctx.mongo.collections.outcomes.deleteOne({ _id: 'lost-begin' });
    expect(await running('kid')).toHaveLength(1);
    expect((await sweepLater()).beginsUndone).toBe(2);
    expect(await running('kid')).toEqual([]);
    expect(await running('mum')).toEqual([]);
  });

  it('defect 7: an end never decided is taken back by the sweep (the call runs on); one decided done is charged', async () => {
    expect(await begin(deps, beginJob('e1', 'kid', now() + 10_000), { id: 'e1-begin', deadline: now() + 10_000 })).toEqual({
      ok: true,
      reason: null,
    });
    const undecided = now() + 10_000;
    expect(await end(deps, endJob('e1', 'kid', undecided), { id: 'e1-end', deadline: undecided })).toEqual({ ok: true, reason: null });
    // The job died before deciding: no outcome.
    await ctx.mongo.collections.outcomes.deleteOne({ _id: 'e1-end' });
    await ctx.queues.processing.obliterate({ force: true });
    expect((await sweepLater()).endsUndone).toBe(2);
    for (const tag of ['kid', 'mum'])
      expect(await running(tag)).toEqual([expect.objectContaining({ transaction_tag: 'e1', in_progress: true, timestamp_end: null })]);
    // The proxy ends it again: this time decided.
    expect(await end(deps, endJob('e1', 'kid', now() + 10_000), { id: 'e1-end2', deadline: now() + 10_000 })).toEqual({
      ok: true,
      reason: null,
    });
    expect(await ctx.queues.processing.getJobCountByTypes('waiting')).toBe(2);
  });

  it('defect 7: a recordTransaction whose job was lost is undone if never decided, finished if decided done', async () => {
    // Crash point: both records written and the caller charged, the parent not, no outcome.
    const deadline = now() + 10_000;
    expect((await record(deps, recordJob('r1', 'rec', deadline), { id: 'lost-record', deadline })).ok).toBe(true);
    await ctx.mongo.collections.outcomes.deleteOne({ _id: 'lost-record' });
    await transactions().updateMany({ transaction_tag: 'r1' }, { $set: { state: 'pending' } });
    // Same again for a second call, whose outcome was decided 'done' before the crash.
    expect((await record(deps, recordJob('r2', 'rec', deadline), { id: 'done-record', deadline })).ok).toBe(true);
    await transactions().updateMany({ transaction_tag: 'r2' }, { $set: { state: 'pending' } });
    const swept = await sweepLater();
    expect(swept).toMatchObject({ recordsUndone: 2, recordsFinished: 2 });
    expect(await transactions().countDocuments({ transaction_tag: 'r1' })).toBe(0);
    expect(await transactions().countDocuments({ transaction_tag: 'r2', state: 'charged' })).toBe(2);
    // r1 charged and refunded, r2 charged once: 11 each.
    expect(await balance('rec')).toBe(989n);
    expect(await balance('recmum')).toBe(989n);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });

  // Chaos finding (clean-clone CI): a worker killed after deciding 'done' but before BullMQ marked its
  // job complete runs the job again after the lock expires; by then the client may have rolled the call
  // back (or begun it again). The re-run must answer what was decided and change nothing.
  const rollbackJob = (tag: string, accountTag: string, deadline: number): RollbackJob => ({
    op: 'rollback',
    transaction_tag: tag,
    account_tag: accountTag,
    deadline,
  });
  const ok = { ok: true, reason: null };

  it('a record re-run after it was decided done and then rolled back charges nothing again', async () => {
    const deadline = now() + 10_000;
    const before = [await balance('rec'), await balance('recmum')];
    expect(await record(deps, recordJob('r3', 'rec', deadline), { id: 'r3-record', deadline })).toMatchObject(ok);
    expect(await rollback(deps, rollbackJob('r3', 'rec', deadline), { id: 'r3-rollback', deadline })).toEqual(ok);
    expect(await record(deps, recordJob('r3', 'rec', deadline), { id: 'r3-record', deadline })).toMatchObject(ok);
    expect(await transactions().countDocuments({ transaction_tag: 'r3' })).toBe(0);
    expect([await balance('rec'), await balance('recmum')]).toEqual(before);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });

  it('a record re-run that did not see the decision (it raced its first run) takes back what it made again', async () => {
    const deadline = now() + 10_000;
    const before = [await balance('rec'), await balance('recmum')];
    expect(await record(deps, recordJob('r4', 'rec', deadline), { id: 'r4-record', deadline })).toMatchObject(ok);
    expect(await rollback(deps, rollbackJob('r4', 'rec', deadline), { id: 'r4-rollback', deadline })).toEqual(ok);
    // rerun: false skips the look-up, as if the decision came after this run looked.
    expect(await record(deps, recordJob('r4', 'rec', deadline), { id: 'r4-record', deadline, rerun: false })).toMatchObject(ok);
    expect(await transactions().countDocuments({ transaction_tag: 'r4' })).toBe(0);
    expect([await balance('rec'), await balance('recmum')]).toEqual(before);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });

  it('a begin re-run after it was decided done and then rolled back leaves no entry', async () => {
    const deadline = now() + 10_000;
    expect(await begin(deps, beginJob('b5', 'kid', deadline), { id: 'b5-begin', deadline })).toEqual(ok);
    expect(await rollback(deps, rollbackJob('b5', 'kid', deadline), { id: 'b5-rollback', deadline })).toEqual(ok);
    expect(await begin(deps, beginJob('b5', 'kid', deadline), { id: 'b5-begin', deadline })).toEqual(ok);
    expect(await begin(deps, beginJob('b5', 'kid', deadline), { id: 'b5-begin', deadline, rerun: false })).toEqual(ok);
    for (const tag of ['kid', 'mum']) expect((await running(tag)).filter((e) => e.transaction_tag === 'b5')).toEqual([]);
  });

  it('an end re-run after its call was rolled back and begun again does not end the new call', async () => {
    const deadline = now() + 10_000;
    expect(await begin(deps, beginJob('e2', 'kid', deadline), { id: 'e2-begin', deadline })).toEqual(ok);
    expect(await end(deps, endJob('e2', 'kid', deadline), { id: 'e2-end', deadline })).toEqual(ok);
    expect(await rollback(deps, rollbackJob('e2', 'kid', deadline), { id: 'e2-rollback', deadline })).toEqual(ok);
    expect(await begin(deps, beginJob('e2', 'kid', deadline), { id: 'e2-begin-again', deadline })).toEqual(ok);
    expect(await end(deps, endJob('e2', 'kid', deadline), { id: 'e2-end', deadline })).toEqual(ok);
    expect(await end(deps, endJob('e2', 'kid', deadline), { id: 'e2-end', deadline, rerun: false })).toEqual(ok);
    for (const tag of ['kid', 'mum']) {
      expect((await running(tag)).filter((e) => e.transaction_tag === 'e2')).toEqual([
        expect.objectContaining({ in_progress: true, timestamp_end: null }),
      ]);
    }
    expect(await rollback(deps, rollbackJob('e2', 'kid', deadline), { id: 'e2-rollback-again', deadline })).toEqual(ok);
  });
});

describe('recovery: through the agent', () => {
  let h: AgentHarness;

  beforeAll(async () => {
    h = await startAgentHarness(1, { AGENT_TIMEOUT_MS: '600' });
    await seed(h.ctx, {
      ...perSecondRating(),
      accounts: [account('slow', { balance: 1000n, linked_accounts: ['slowmum'] }), account('slowmum', { balance: 1000n })],
    });
  });

  afterAll(() => h?.close());

  it('defect 8: a begin answered TIMEOUT (no worker in time) never takes effect, and says so in MongoDB', async () => {
    // No worker while the agent waits: the job waits in the call queue past its deadline.
    await h.workers[0].stop();
    const answer = await h.rest('/v1/begin_transaction', {
      transaction_tag: 'late',
      account_tag: 'slow',
      source: '1',
      destination: '391234',
    });
    expect(answer).toMatchObject({ status: 200, body: { ok: false, reason: 'TIMEOUT' } });
    expect(await h.ctx.mongo.collections.outcomes.countDocuments({ state: 'abandoned', transaction_tag: 'late' })).toBe(1);
    expect(await h.ctx.queues.transactions.waiting()).toBe(1);
    h.workers[0] = await startWorkerProcess(h.ctx.config);
    await waitFor(() => callQueueIdle(h.ctx), 'the late job taken and done');
    for (const tag of ['slow', 'slowmum'])
      expect((await h.ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.running_transactions).toEqual([]);
  });
});

describe('recovery: the maintenance schedule survives a Redis that lost its data (defect 10)', () => {
  let ctx: TestContext;
  let pool: WorkerPool | undefined;

  beforeAll(async () => {
    ctx = await createTestContext({ LONG_CALL_SCAN_SECONDS: '1' });
  });

  afterAll(async () => {
    await pool?.close();
    await ctx?.destroy();
  });

  it('is registered again by the running workers', async () => {
    pool = await startWorkers(ctx, ['maintenance']);
    expect((await ctx.queues.maintenance.getJobSchedulers()).map((s) => s.key)).toContain(SCAN_SCHEDULER_ID);
    const keys = await ctx.redis.keys(`${ctx.config.queuePrefix}:*`);
    await ctx.redis.del(...keys);
    expect(await ctx.queues.maintenance.getJobSchedulers()).toEqual([]);
    await waitFor(
      async () => (await ctx.queues.maintenance.getJobSchedulers()).some((s) => s.key === SCAN_SCHEDULER_ID),
      'the schedule back',
      10_000,
    );
  });
});
