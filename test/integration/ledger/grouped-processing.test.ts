import type { CommandStartedEvent, CommandSucceededEvent } from 'mongodb';
import type { ProcessingJob } from '../../../src/shared/domain/queues/payloads';
import type { RunningTransaction } from '../../../src/shared/domain/types';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { connectMongo, type Mongo } from '../../../src/shared/domain/store';
import { QueueNames } from '../../../src/shared/domain/queues/names';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { processingDeps } from '../../../src/workers/transactions/deps';
import { enqueueProcessing, processingJob } from '../../../src/workers/transactions/end';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { startWorkers, type WorkerPool } from '../../../src/workers/worker-pool';
import { createTestContext, TestContext } from '../../support/harness';
import { account, runningEntry } from '../../support/seed';
import { waitFor } from '../ops/receivers';

const perAccount = 10;
const began = new Date('2026-11-24T10:00:00Z');

/** Call i of an account lasts i + 1 seconds: 60 per minute, 1 s steps, so it costs i + 1 (55 in all). */
const endedCallsOf = (tag: string): RunningTransaction[] =>
  Array.from({ length: perAccount }, (_, i) =>
    runningEntry(`${tag}-t${i}`, {
      id: `${tag}-entry-${i}`,
      origin_account_tag: tag,
      in_progress: false,
      timestamp_begin: began,
      timestamp_end: new Date(began.getTime() + (i + 1) * 1000),
      call_parties: [tag],
    }),
  );

const jobOf = (tag: string, i: number): ProcessingJob => ({
  account_tag: tag,
  transaction_tag: `${tag}-t${i}`,
  entry_id: `${tag}-entry-${i}`,
  enqueued_at: new Date().toISOString(),
});

interface Setup {
  ctx: TestContext;
  rating: RatingDataCache;
  /** A second client on the same database whose commands are counted in `commands`. */
  counted: Mongo;
  commands: string[];
  /** How many running entries each account document that a `find` of the counted client returned held. */
  entriesPerAccountRead: number[];
}

/** A clean context whose accounts `tags` each hold perAccount ended calls, and a client that counts commands. */
async function setUp(tags: string[], overrides: Record<string, string> = {}): Promise<Setup> {
  const ctx = await createTestContext(overrides);
  const rating = await RatingDataCache.start(ctx);
  await ctx.mongo.collections.accounts.insertMany(
    tags.map((tag) => account(tag, { balance: 1000n, running_transactions: endedCallsOf(tag) })),
  );
  const counted = await connectMongo(ctx.mongo.url, ctx.config.mongoDb, { monitorCommands: true });
  const commands: string[] = [];
  const entriesPerAccountRead: number[] = [];
  const readingAccounts = new Set<number>();
  counted.client.on('commandStarted', (e: CommandStartedEvent) => {
    commands.push(e.commandName);
    if (e.commandName === 'find' && e.command.find === 'accounts') readingAccounts.add(e.requestId);
  });
  counted.client.on('commandSucceeded', (e: CommandSucceededEvent) => {
    if (!readingAccounts.delete(e.requestId)) return;
    for (const doc of (e.reply as { cursor: { firstBatch: Array<{ running_transactions?: unknown[] }> } }).cursor.firstBatch)
      entriesPerAccountRead.push(doc.running_transactions?.length ?? 0);
  });
  return { ctx, rating, counted, commands, entriesPerAccountRead };
}

async function tearDown(s: Setup | undefined): Promise<void> {
  await s?.counted.close();
  await s?.rating.close();
  await s?.ctx.destroy();
}

/** Every call of `tags` charged once: balances, entries and markers gone, records charged, a clean audit. */
async function expectChargedOnce(ctx: TestContext, tags: string[]): Promise<void> {
  const { accounts, transactions } = ctx.mongo.collections;
  for (const tag of tags) {
    const after = await accounts.findOne({ account_tag: tag });
    expect(after!.balance).toBe(1000n - 55n);
    expect(after!.running_transactions).toEqual([]);
    // A worker process leaves settled markers for the account's next begin or end to remove: each
    // one left has its ledger entry.
    const left = (after!.ledger_pending ?? []).map((m) => m.op);
    expect(await ctx.mongo.collections.ledger.countDocuments({ _id: { $in: left } })).toBe(left.length);
  }
  expect(await transactions.countDocuments({ account_tag: { $in: tags }, state: 'charged' })).toBe(tags.length * perAccount);
  const report = await auditLedger(ctx.mongo.collections);
  expect(report.differences).toEqual([]);
  expect(report.pending_markers).toBe(0);
}

/**
 * Processing under load (issue 12): a worker's concurrent jobs share their MongoDB commands (group
 * commit, src/shared/infra/group-commands.ts) instead of six commands per call, and every call is still
 * charged exactly once, its record marked charged and its marker removed; a redelivery of every job
 * charges nothing more.
 */
describe('processing many ended calls at once', () => {
  let s: Setup;
  const tags = ['a', 'b', 'c'];

  beforeAll(async () => {
    s = await setUp(tags);
  });

  afterAll(() => tearDown(s));

  const jobs = () => tags.flatMap((tag) => Array.from({ length: perAccount }, (_, i) => jobOf(tag, i)));
  const deps = () => ({ ctx: { ...s.ctx, mongo: s.counted }, rating: s.rating });

  it('charges each call once with far fewer commands than calls x 6', async () => {
    const calls = tags.length * perAccount;
    const outcomes = await Promise.all(jobs().map((job) => processEndedCall(deps(), job)));
    expect(outcomes.map((o) => o.outcome)).toEqual(Array(calls).fill('charged'));
    // One command per call is the guarded debit itself; the reads, record inserts, ledger entries,
    // marker removals and charged marks travel grouped. Six per call before the grouping.
    expect(s.commands.length).toBeLessThan(2 * calls);
    // Each account is read for the one entry a job charges, not with its other running calls: several
    // calls of one account in the same group take a round each.
    expect(s.entriesPerAccountRead.length).toBeGreaterThanOrEqual(calls);
    expect(Math.max(...s.entriesPerAccountRead)).toBe(1);

    expect(await s.ctx.mongo.collections.ledger.countDocuments({ kind: 'charge' })).toBe(calls);
    await expectChargedOnce(s.ctx, tags);
  });

  it('a redelivery of every job charges nothing more', async () => {
    const outcomes = await Promise.all(jobs().map((job) => processEndedCall(deps(), job)));
    expect(new Set(outcomes.map((o) => o.outcome))).toEqual(new Set(['already-done']));
    for (const tag of tags) expect((await s.ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.balance).toBe(945n);
    expect((await auditLedger(s.ctx.mongo.collections)).differences).toEqual([]);
  });
});

/**
 * An open loop (issue 12): ended calls reach a worker one at a time, a few milliseconds apart, so
 * without a window each sends its own six commands. With PROCESSING_WINDOW_MS the processing lane's
 * grouped commands wait that long for company, and calls arriving within it share them.
 */
describe('processing calls that arrive one at a time, with a settle window', () => {
  let s: Setup;
  let pool: WorkerPool | undefined;
  const tags = ['d', 'e'];

  beforeAll(async () => {
    s = await setUp([...tags, 'queued'], { PROCESSING_WINDOW_MS: '200' });
  });

  afterAll(async () => {
    await pool?.close();
    await tearDown(s);
  });

  it('shares the grouped commands of calls arriving within the window, and charges each once', async () => {
    const lane = processingDeps({ ctx: { ...s.ctx, mongo: s.counted }, rating: s.rating });
    const calls = tags.length * perAccount;
    const started: Array<Promise<{ outcome: string }>> = [];
    for (let i = 0; i < perAccount; i++) {
      for (const tag of tags) {
        started.push(processEndedCall(lane, jobOf(tag, i)));
        // One call at a time, as an open loop delivers them: no two calls start in the same tick.
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
    const outcomes = await Promise.all(started);
    expect(outcomes.map((o) => o.outcome)).toEqual(Array(calls).fill('charged'));
    // Six per call without the window (each call alone); the guarded debit stays one per call.
    expect(s.commands.length).toBeLessThan(2 * calls);
    await expectChargedOnce(s.ctx, tags);
  });

  it("the window's handles are made once per process: an end that charges in its own write asks for them on every call", () => {
    const deps = { ctx: s.ctx, rating: s.rating };
    const lane = processingDeps(deps);
    expect(lane.ctx.mongo.collections.transactions).not.toBe(s.ctx.mongo.collections.transactions);
    // New handles on each call would each have their own batchers: calls would never share a command.
    expect(processingDeps(deps).ctx.mongo.collections.transactions).toBe(lane.ctx.mongo.collections.transactions);
  });

  it('a worker given the window charges queued calls through it, each once', async () => {
    for (let i = 0; i < perAccount; i++) await enqueueProcessing(s.ctx, processingJob('queued', `queued-t${i}`, `queued-entry-${i}`));
    pool = await startWorkers(s.ctx, [QueueNames.processing]);
    const { accounts, transactions } = s.ctx.mongo.collections;
    await waitFor(
      async () => (await transactions.countDocuments({ account_tag: 'queued', state: 'charged' })) === perAccount,
      'the queued calls charged',
    );
    // Settled: each marker left has its ledger entry (its removal rides on the account's next begin or end).
    const { ledger } = s.ctx.mongo.collections;
    await waitFor(async () => {
      const left = (await accounts.findOne({ account_tag: 'queued' }))!.ledger_pending ?? [];
      return (await ledger.countDocuments({ _id: { $in: left.map((m) => m.op) } })) === left.length;
    }, 'their markers settled');
    await expectChargedOnce(s.ctx, ['queued']);
  });
});
