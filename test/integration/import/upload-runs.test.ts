import type { QueueEvents } from 'bullmq';
import { claimUpload, ContentId, UploadRun, uploadsOf } from '../../../src/shared/domain/imports';
import { QueueNames } from '../../../src/shared/domain/queues/names';
import { bullmqPrefix, createQueueEvents } from '../../../src/shared/domain/queues/queues';
import { waitFor } from '../../support/agent-harness';
import { createTestContext, type TestContext } from '../../support/harness';
import { csvOf, tempFile } from './support';

/**
 * The lifecycle of an upload's run (src/shared/domain/imports/uploads.ts) with no worker: its batches stay
 * queued, so the run is still going when it is stopped or loses its claim.
 */
describe('upload runs: stop and lost claims', () => {
  let ctx: TestContext;
  let events: QueueEvents;

  beforeAll(async () => {
    ctx = await createTestContext();
    events = createQueueEvents(ctx.newRedis(), bullmqPrefix(ctx.config), QueueNames.imports);
    events.on('error', () => undefined);
    await events.waitUntilReady();
  });

  afterAll(async () => {
    await events?.close();
    await ctx?.destroy();
  });

  async function start(tag: string): Promise<{ run: UploadRun; importId: string }> {
    const csv = csvOf([{ tag, account: 'a0', seconds: 5 }]);
    const importId = new ContentId('csv').update(Buffer.from(csv)).id();
    const claim = await claimUpload(ctx.mongo.db, { importId, name: `${tag}.csv`, format: 'csv' });
    expect(claim.owned).toBe(true);
    const run = new UploadRun({
      db: ctx.mongo.db,
      queue: ctx.queues.imports,
      events,
      importId,
      format: 'csv',
      file: tempFile(`${tag}.csv`, csv),
      claim,
      progressMs: 50,
    });
    await waitFor(async () => (await uploadsOf(ctx.mongo.db).findOne({ _id: importId }))?.accepted === 1, 'the line to be read');
    return { run, importId };
  }

  it('a stopped run ends failed with the reason; the next upload claims it again', async () => {
    const { run, importId } = await start('s1');
    await run.stop('interrupted: the API process stopped');
    expect(await uploadsOf(ctx.mongo.db).findOne({ _id: importId })).toMatchObject({
      state: 'failed',
      error: 'interrupted: the API process stopped',
      finished_at: expect.any(Date),
    });
    const again = await claimUpload(ctx.mongo.db, { importId, name: 's1.csv', format: 'csv' });
    expect(again.owned).toBe(true);
    expect(await uploadsOf(ctx.mongo.db).findOne({ _id: importId })).toMatchObject({
      state: 'running',
      error: null,
      lines: 0,
      runner: again.runner,
    });
  });

  it('a run whose claim another process took over stops without writing', async () => {
    const { run, importId } = await start('s2');
    await uploadsOf(ctx.mongo.db).updateOne({ _id: importId }, { $set: { runner: 'other-process', lines: 99 } });
    await run.finished;
    expect(await uploadsOf(ctx.mongo.db).findOne({ _id: importId })).toMatchObject({
      state: 'running',
      runner: 'other-process',
      lines: 99,
    });
  });
});
