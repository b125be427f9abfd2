import type { QueueEvents } from 'bullmq';
import { bullmqPrefix, createQueueEvents } from '../../../src/shared/domain/queues/queues';
import { QueueNames } from '../../../src/shared/domain/queues/names';
import { BatchSubmitter } from '../../../src/shared/domain/imports/submit';
import { finishedBatch, importBatchId } from '../../../src/shared/domain/ledger';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import type { ImportBatchResult } from '../../../src/shared/domain/queues/payloads';
import { waitFor } from '../../support/agent-harness';
import { createTestContext, TestContext } from '../../support/harness';
import { startWorkerProcess, WorkerProcess } from '../../support/processes';
import { importLine, seedImportData } from './support';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { processImportBatch } from '../../../src/workers/imports/batch';

/**
 * Redis is only the fast path: an import whose batch job or settlement job Redis lost (a restart
 * without persistence) still charges every call, and the importer still finishes. The importer sends
 * the lost job again, under its id, from what it holds; a batch or settlement run twice charges once.
 */
describe('an import whose jobs Redis lost', () => {
  let ctx: TestContext;
  let events: QueueEvents;
  let worker: WorkerProcess | undefined;
  const balance = async (tag: string) => (await ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.balance;
  const lines = (batch: number, tag: string) => [
    importLine(batch * 10, `lost-${batch}-0`, tag, 30),
    importLine(batch * 10 + 1, `lost-${batch}-1`, tag, 45),
  ];
  /** Removes the job as a Redis that lost it would: once it is queued, before any worker takes it. */
  const lose = async (jobId: string) => {
    let job = null;
    for (let i = 0; i < 200 && !job; i++) {
      job = await ctx.queues.imports.getJob(jobId);
      if (!job) await new Promise((r) => setTimeout(r, 25));
    }
    expect(job).toBeTruthy();
    await job!.remove();
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    await seedImportData(ctx, 2);
    events = createQueueEvents(ctx.newRedis(), bullmqPrefix(ctx.config), QueueNames.imports);
    await events.waitUntilReady();
  });

  afterAll(async () => {
    await worker?.stop();
    await events?.close();
    await ctx?.destroy();
  });

  it('a lost batch job is sent again and charged; a lost settlement job is sent again and the debits land', async () => {
    const results: ImportBatchResult[] = [];
    const submitter = new BatchSubmitter(ctx.queues.imports, events, ctx.mongo.db, 4, async (r) => void results.push(r));
    // No worker yet: the batch waits in the queue, where Redis loses it.
    await submitter.submit('lost', 0, lines(0, 'a0'));
    await lose(importBatchId('lost', 0));
    worker = await startWorkerProcess(ctx.config);
    expect(await waitFor(async () => results.length === 1, 'the lost batch, sent again and run', 30_000)).toBe(true);

    // The settlement is sent at drain; Redis loses it before a worker takes it.
    await worker.stop();
    worker = undefined;
    const drained = submitter.drain();
    const settlement = await waitFor(
      async () => (await ctx.queues.imports.getJobs(['waiting', 'prioritized'])).some((j) => j.name === 'import-settle'),
      'the settlement job',
      10_000,
    );
    expect(settlement).toBe(true);
    const [job] = (await ctx.queues.imports.getJobs(['waiting', 'prioritized'])).filter((j) => j.name === 'import-settle');
    await lose(job.id!);
    worker = await startWorkerProcess(ctx.config, { LONG_CALL_SCAN_SECONDS: '3600' });
    await Promise.race([
      drained,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('the import did not finish: its lost settlement was not sent again')), 30_000),
      ),
    ]);
    submitter.close();
    expect(await finishedBatch(ctx.mongo.db, importBatchId('lost', 0))).toBeTruthy();
    expect(await balance('a0')).toBe(1_000_000n - 75n);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  }, 120_000);

  it('a batch finished by the job Redis lost, and answered through the job sent again, counts as rated by this import', async () => {
    await worker?.stop();
    worker = undefined;
    const results: ImportBatchResult[] = [];
    const submitter = new BatchSubmitter(ctx.queues.imports, events, ctx.mongo.db, 4, async (r) => void results.push(r));
    const batchLines = lines(0, 'a1');
    await submitter.submit('late', 0, batchLines);
    const id = importBatchId('late', 0);
    expect(await waitFor(async () => (await ctx.queues.imports.getJob(id)) !== undefined, 'the job queued', 10_000)).toBe(true);
    const first = (await ctx.queues.imports.getJob(id))!.timestamp;
    await lose(id);
    // The importer's poll finds it gone and sends it again (no result stored yet).
    expect(
      await waitFor(async () => ((await ctx.queues.imports.getJob(id))?.timestamp ?? first) !== first, 'the job sent again', 20_000),
    ).toBe(true);
    // Meanwhile the first job's worker, still running, finishes the batch (here, in this process).
    const rating = await RatingDataCache.start(ctx);
    try {
      await processImportBatch({ ctx, rating }, { import_id: 'late', batch: 0, lines: batchLines, deadline: null }, first);
    } finally {
      await rating.close();
    }
    worker = await startWorkerProcess(ctx.config, { LONG_CALL_SCAN_SECONDS: '3600' });
    expect(await waitFor(async () => results.length === 1, 'the answer of the job sent again', 30_000)).toBe(true);
    expect(results[0]).toMatchObject({ replayed: false, rated: 2 });
    submitter.close();
  }, 120_000);
  it('a lost job of a batch id finished with other lines is not answered with their result', async () => {
    await worker?.stop();
    worker = undefined;
    const rating = await RatingDataCache.start(ctx);
    try {
      await processImportBatch({ ctx, rating }, { import_id: 'reused', batch: 0, lines: lines(0, 'a0'), deadline: null }, 1);
    } finally {
      await rating.close();
    }
    const results: ImportBatchResult[] = [];
    const submitter = new BatchSubmitter(ctx.queues.imports, events, ctx.mongo.db, 4, async (r) => void results.push(r));
    await submitter.submit('reused', 0, lines(7, 'a1'));
    await lose(importBatchId('reused', 0));
    // No worker runs: the answer can only come from the importer's own poll (the job found gone).
    const outcome = await Promise.race([
      submitter.drain().then(
        () => 'drained',
        (err: Error) => err.message,
      ),
      new Promise<string>((resolve) => setTimeout(() => resolve(`no failure; answered ${JSON.stringify(results)}`), 20_000)),
    ]);
    expect(outcome).toMatch(/other lines/);
    expect(results).toEqual([]);
    submitter.close();
  }, 60_000);
});
