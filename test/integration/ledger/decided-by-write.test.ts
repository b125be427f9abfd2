import { decideAbandoned } from '../../../src/shared/domain/calls/decisions';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { recoverInterrupted, takeoverAfterMs } from '../../../src/workers/maintenance/recover';
import { begin } from '../../../src/workers/transactions/begin';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { endCall } from '../../../src/workers/transactions/end';
import { rollback } from '../../../src/workers/transactions/rollback';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * Issue 36, first step: a single-party call's begin and end are decided by their own conditional write
 * on the caller's account (no decision document), and the agent's TIMEOUT is made true by a fence on
 * that account which the write must not find. Each side is tried against the other, in both orders,
 * and with the call charged before the agent looks.
 */
describe('single-party begin and end decided by their own write', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const accounts = () => ctx.mongo.collections.accounts;
  const outcomes = () => ctx.mongo.collections.outcomes;
  const running = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.running_transactions;
  const balance = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.balance;
  const jobs = callJobs(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const soon = () => Date.now() + 10_000;
  const abandon = (jobId: string, op: 'begin' | 'end', accountTag: string, tag: string) =>
    decideAbandoned(ctx.mongo.collections, { jobId, op, account_tag: accountTag, transaction_tag: tag });

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating(),
      accounts: ['solo1', 'solo2', 'solo3', 'solo4', 'solo5'].map((tag) => account(tag, { balance: 1000n })),
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('a begin decided by its write leaves no decision document, and an abandonment after it answers ok', async () => {
    const deadline = soon();
    expect(await begin(deps, jobs.begin('w1', 'solo1', deadline), { id: 'w1-begin', deadline })).toEqual({ ok: true, reason: null });
    expect(await outcomes().findOne({ _id: 'w1-begin' })).toBeNull();
    const [entry] = await running('solo1');
    expect(entry).toMatchObject({ begin_job: 'w1-begin', begin_decided: true });
    // The agent's reply was lost: its abandonment finds the call begun and answers it.
    const decision = await abandon('w1-begin', 'begin', 'solo1', 'w1');
    expect(decision).toMatchObject({ won: false, doc: { state: 'done', result: { ok: true } } });
    expect(await running('solo1')).toHaveLength(1);
  });

  it('a begin that runs after the agent abandoned it makes nothing and answers TIMEOUT', async () => {
    expect(await abandon('w2-begin', 'begin', 'solo2', 'w2')).toEqual({ won: true });
    const deadline = soon();
    expect(await begin(deps, jobs.begin('w2', 'solo2', deadline), { id: 'w2-begin', deadline })).toEqual({ ok: false, reason: 'TIMEOUT' });
    expect(await running('solo2')).toEqual([]);
    expect(await outcomes().findOne({ _id: 'w2-begin' })).toMatchObject({ state: 'abandoned' });
  });

  it('an end decided by its write, then charged: an abandonment after it (reply lost) answers ok', async () => {
    const deadline = soon();
    await begin(deps, jobs.begin('w3', 'solo3', deadline), { id: 'w3-begin', deadline });
    const ended = await endCall(deps, jobs.end('w3', 'solo3', 10, deadline), { id: 'w3-end', deadline });
    expect(ended.result).toEqual({ ok: true, reason: null });
    expect(await outcomes().findOne({ _id: 'w3-end' })).toBeNull();
    expect(ended.toProcess).toHaveLength(1);
    expect((await processEndedCall(deps, ended.toProcess[0])).outcome).toBe('charged');
    expect(await running('solo3')).toEqual([]);
    const decision = await abandon('w3-end', 'end', 'solo3', 'w3');
    expect(decision).toMatchObject({ won: false, doc: { state: 'done', result: { ok: true } } });
    const record = await ctx.mongo.collections.transactions.findOne({ account_tag: 'solo3', transaction_tag: 'w3' });
    expect(record).toMatchObject({ state: 'charged', end_job: 'w3-end' });
    expect(await balance('solo3')).toBe(1000n - record!.fee);
  });

  it('an end that runs after the agent abandoned it leaves the call running and answers TIMEOUT', async () => {
    const deadline = soon();
    await begin(deps, jobs.begin('w4', 'solo4', deadline), { id: 'w4-begin', deadline });
    expect(await abandon('w4-end', 'end', 'solo4', 'w4')).toEqual({ won: true });
    const ended = await endCall(deps, jobs.end('w4', 'solo4', 10, deadline), { id: 'w4-end', deadline });
    expect(ended.result).toEqual({ ok: false, reason: 'TIMEOUT' });
    expect(ended.toProcess).toEqual([]);
    const [entry] = await running('solo4');
    expect(entry).toMatchObject({ in_progress: true, timestamp_end: null });
    expect(entry.end_job ?? null).toBeNull();
    // A later end of the same call (the proxy's retry) ends it.
    const retry = await endCall(deps, jobs.end('w4', 'solo4', 12, soon()), { id: 'w4-end-2', deadline: soon() });
    expect(retry.result).toEqual({ ok: true, reason: null });
  });

  it('the recovery sweep leaves decided entries alone and drops fences past their time', async () => {
    const deadline = soon();
    await begin(deps, jobs.begin('w5', 'solo5', deadline), { id: 'w5-begin', deadline });
    await abandon('w5-other', 'begin', 'solo5', 'w5x');
    expect((await accounts().findOne({ account_tag: 'solo5' }))!.fenced_jobs).toHaveLength(1);
    // Within its job's time (the deadline not yet past the sweep's cutoff), the fence stays.
    await recoverInterrupted(deps, new Date(Date.now() + 1000));
    expect((await accounts().findOne({ account_tag: 'solo5' }))!.fenced_jobs).toHaveLength(1);
    // Past it (an agent's wait and its abandonment beyond the takeover time), the job is settled and
    // the fence spent (fence-pruning.test.ts); the decided entry stays.
    const { agentTimeoutMs, agentAbandonMs } = ctx.config;
    await recoverInterrupted(deps, new Date(Date.now() + takeoverAfterMs(deps) + agentTimeoutMs + agentAbandonMs + 60_000));
    expect(await running('solo5')).toEqual([expect.objectContaining({ begin_job: 'w5-begin', begin_decided: true })]);
    expect((await accounts().findOne({ account_tag: 'solo5' }))!.fenced_jobs ?? []).toHaveLength(0);
  });
});

describe("a tag used again after a rollback, while the first use's jobs run again", () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const jobs = callJobs(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const soon = () => Date.now() + 10_000;
  const running = async (tag: string) => (await ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.running_transactions;

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, { ...perSecondRating(), accounts: [account('again1', { balance: 1000n }), account('again2', { balance: 1000n })] });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  // Found by the chaos run of 2026-11-27 (seed 536647): an end of the first use, run again after its
  // worker was killed, ended the second use's call, whose own end then answered ALREADY_ENDED.
  it("an end of the charged and rolled-back first use, run again, leaves the second use's call alone", async () => {
    await begin(deps, jobs.begin('t1', 'again1'), { id: 'use1-begin', deadline: soon() });
    const first = await endCall(deps, jobs.end('t1', 'again1', 10), { id: 'use1-end', deadline: soon() });
    expect((await processEndedCall(deps, first.toProcess[0])).outcome).toBe('charged');
    expect(await rollback(deps, jobs.rollback('t1', 'again1'), { id: 'use1-rollback', deadline: soon() })).toEqual({
      ok: true,
      reason: null,
    });
    expect(await begin(deps, jobs.begin('t1', 'again1'), { id: 'use2-begin', deadline: soon() })).toEqual({ ok: true, reason: null });
    const rerun = await endCall(deps, jobs.end('t1', 'again1', 10), { id: 'use1-end', deadline: soon(), rerun: true });
    expect(rerun.toProcess).toEqual([]);
    expect(await running('again1')).toEqual([expect.objectContaining({ begin_job: 'use2-begin', in_progress: true })]);
    const second = await endCall(deps, jobs.end('t1', 'again1', 20), { id: 'use2-end', deadline: soon() });
    expect(second.result).toEqual({ ok: true, reason: null });
  });

  it("an end of the first use, rolled back before it was charged, run again, leaves the second use's call alone", async () => {
    await begin(deps, jobs.begin('t2', 'again2'), { id: 'u1-begin', deadline: soon() });
    await endCall(deps, jobs.end('t2', 'again2', 10), { id: 'u1-end', deadline: soon() });
    expect(await rollback(deps, jobs.rollback('t2', 'again2'), { id: 'u1-rollback', deadline: soon() })).toEqual({
      ok: true,
      reason: null,
    });
    // The first use's begin, run again, begins nothing.
    await begin(deps, jobs.begin('t2', 'again2'), { id: 'u1-begin', deadline: soon(), rerun: true });
    expect(await running('again2')).toEqual([]);
    expect(await begin(deps, jobs.begin('t2', 'again2'), { id: 'u2-begin', deadline: soon() })).toEqual({ ok: true, reason: null });
    const rerun = await endCall(deps, jobs.end('t2', 'again2', 10), { id: 'u1-end', deadline: soon(), rerun: true });
    expect(rerun.toProcess).toEqual([]);
    expect(await running('again2')).toEqual([expect.objectContaining({ begin_job: 'u2-begin', in_progress: true })]);
  });
});
