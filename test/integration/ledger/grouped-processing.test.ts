import type { CommandStartedEvent } from 'mongodb';
import type { RunningTransaction } from '../../../src/shared/domain/types';
import { auditLedger } from '../../../src/shared/ledger/audit';
import { connectMongo, type Mongo } from '../../../src/shared/mongo';
import { RatingDataCache } from '../../../src/shared/rating-data/cache';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { processingDeps } from '../../../src/workers/transactions/deps';
import { enqueueProcessing } from '../../../src/workers/transactions/end';
import { startWorkers, type WorkerPool } from '../../../src/workers/worker-pool';
import { QueueNames } from '../../../src/shared/queues/names';
import { waitFor } from '../ops/receivers';
import { createTestContext, TestContext } from '../../support/harness';
import { account, runningEntry } from '../../support/seed';

/**
 * Processing under load (issue 12): a worker's concurrent jobs share their MongoDB commands (group
 * commit, src/shared/group-commands.ts) instead of six commands per call, and every call is still
 * charged exactly once, its record marked charged and its marker removed; a redelivery of every job
 * charges nothing more.
 */
describe('processing many ended calls at once', () => {
  let ctx: TestContext;
  let counted: Mongo;
  let rating: RatingDataCache;
  const commands: string[] = [];
  const tags = ['a', 'b', 'c'];
  const perAccount = 10;
  const began = new Date('2026-11-24T10:00:00Z');

  const entriesOf = (tag: string): RunningTransaction[] =>
    Array.from({ length: perAccount }, (_, i) =>
      runningEntry(`${tag}-t${i}`, {
        id: `${tag}-entry-${i}`,
        origin_account_tag: tag,
        in_progress: false,
        timestamp_begin: began,
        // Call i of an account lasts i + 1 seconds: 60 per minute, 1 s steps, so it costs i + 1.
        timestamp_end: new Date(began.getTime() + (i + 1) * 1000),
        call_parties: [tag],
      }),
    );

  beforeAll(async () => {
    ctx = await createTestContext();
    rating = await RatingDataCache.start(ctx);
    await ctx.mongo.collections.accounts.insertMany(tags.map((tag) => account(tag, { balance: 1000n, running_transactions: entriesOf(tag) })));
    counted = await connectMongo(ctx.mongo.url, ctx.config.mongoDb, { monitorCommands: true });
    counted.client.on('commandStarted', (e: CommandStartedEvent) => commands.push(e.commandName));
  });

  afterAll(async () => {
    await counted?.close();
    await rating?.close();
    await ctx?.destroy();
  });

  const jobs = () => tags.flatMap((tag) => entriesOf(tag).map((e) => ({ account_tag: tag, transaction_tag: e.transaction_tag, entry_id: e.id, enqueued_at: new Date().toISOString() })));
  const deps = () => ({ ctx: { ...ctx, mongo: counted }, rating });

  it('charges each call once with far fewer commands than calls x 6', async () => {
    const calls = tags.length * perAccount;
    const outcomes = await Promise.all(jobs().map((job) => processEndedCall(deps(), job)));
    expect(outcomes.map((o) => o.outcome)).toEqual(Array(calls).fill('charged'));
    // One command per call is the guarded debit itself; the reads, record inserts, ledger entries,
    // marker removals and charged marks travel grouped. Six per call before the grouping.
    expect(commands.length).toBeLessThan(2 * calls);

    const { accounts, ledger, transactions } = ctx.mongo.collections;
    // 1 + 2 + ... + 10 = 55 per account.
    for (const tag of tags) {
      const after = await accounts.findOne({ account_tag: tag });
      expect(after!.balance).toBe(1000n - 55n);
      expect(after!.running_transactions).toEqual([]);
      expect(after!.ledger_pending ?? []).toEqual([]);
    }
    expect(await ledger.countDocuments({ kind: 'charge' })).toBe(calls);
    expect(await transactions.countDocuments({ state: 'charged' })).toBe(calls);
    const report = await auditLedger(ctx.mongo.collections);
    expect(report.differences).toEqual([]);
    expect(report.pending_markers).toBe(0);
  });

  it('a redelivery of every job charges nothing more', async () => {
    const outcomes = await Promise.all(jobs().map((job) => processEndedCall(deps(), job)));
    expect(new Set(outcomes.map((o) => o.outcome))).toEqual(new Set(['already-done']));
    for (const tag of tags) expect((await ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.balance).toBe(945n);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });
});

/**
 * An open loop (issue 12): ended calls reach a worker one at a time, a few milliseconds apart, so
 * without a window each sends its own six commands. With PROCESSING_WINDOW_MS the processing lane's
 * grouped commands wait that long for company, and calls arriving within it share them.
 */
describe('processing calls that arrive one at a time, with a settle window', () => {
  let ctx: TestContext;
  let counted: Mongo;
  let rating: RatingDataCache;
  const commands: string[] = [];
  const tags = ['d', 'e'];
  let pool: WorkerPool | undefined;
  const perAccount = 10;
  const began = new Date('2026-11-24T10:00:00Z');

  beforeAll(async () => {
    ctx = await createTestContext({ PROCESSING_WINDOW_MS: '200' });
    rating = await RatingDataCache.start(ctx);
    await ctx.mongo.collections.accounts.insertMany(
      [...tags, 'queued'].map((tag) =>
        account(tag, {
          balance: 1000n,
          running_transactions: Array.from({ length: perAccount }, (_, i) =>
            runningEntry(`${tag}-t${i}`, {
              id: `${tag}-entry-${i}`,
              origin_account_tag: tag,
              in_progress: false,
              timestamp_begin: began,
              timestamp_end: new Date(began.getTime() + (i + 1) * 1000),
              call_parties: [tag],
            }),
          ),
        }),
      ),
    );
    counted = await connectMongo(ctx.mongo.url, ctx.config.mongoDb, { monitorCommands: true });
    counted.client.on('commandStarted', (e: CommandStartedEvent) => commands.push(e.commandName));
  });

  afterAll(async () => {
    await pool?.close();
    await counted?.close();
    await rating?.close();
    await ctx?.destroy();
  });

  it('shares the grouped commands of calls arriving within the window, and charges each once', async () => {
    const lane = processingDeps({ ctx: { ...ctx, mongo: counted }, rating });
    const calls = tags.length * perAccount;
    const started: Array<Promise<{ outcome: string }>> = [];
    for (let i = 0; i < perAccount; i++) {
      for (const tag of tags) {
        started.push(processEndedCall(lane, { account_tag: tag, transaction_tag: `${tag}-t${i}`, entry_id: `${tag}-entry-${i}`, enqueued_at: new Date().toISOString() }));
        // One call at a time, as an open loop delivers them: no two calls start in the same tick.
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
    const outcomes = await Promise.all(started);
    expect(outcomes.map((o) => o.outcome)).toEqual(Array(calls).fill('charged'));
    // Six per call without the window (each call alone); the guarded debit stays one per call.
    expect(commands.length).toBeLessThan(2 * calls);

    for (const tag of tags) {
      const after = await ctx.mongo.collections.accounts.findOne({ account_tag: tag });
      expect(after!.balance).toBe(1000n - 55n);
      expect(after!.running_transactions).toEqual([]);
      expect(after!.ledger_pending ?? []).toEqual([]);
    }
    expect(await ctx.mongo.collections.transactions.countDocuments({ state: 'charged' })).toBe(calls);
    const report = await auditLedger(ctx.mongo.collections);
    expect(report.differences).toEqual([]);
    expect(report.pending_markers).toBe(0);
  });

  it('a worker given the window charges queued calls through it, each once', async () => {
    for (let i = 0; i < perAccount; i++) await enqueueProcessing(ctx, 'queued', { id: `queued-entry-${i}`, transaction_tag: `queued-t${i}` });
    pool = await startWorkers(ctx, [QueueNames.processing]);
    const { accounts, transactions } = ctx.mongo.collections;
    await waitFor(async () => (await transactions.countDocuments({ account_tag: 'queued', state: 'charged' })) === perAccount, 'the queued calls charged');
    await waitFor(async () => ((await accounts.findOne({ account_tag: 'queued' }))!.ledger_pending ?? []).length === 0, 'their markers settled');
    const after = await accounts.findOne({ account_tag: 'queued' });
    expect(after!.balance).toBe(1000n - 55n);
    expect(after!.running_transactions).toEqual([]);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });
});
