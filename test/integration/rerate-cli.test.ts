import { spawn } from 'node:child_process';
import path from 'node:path';
import { announceRatingDataChange, RatingDataCache } from '../../src/shared/domain/rating-data/cache';
import { processRerateBatch } from '../../src/workers/rerating/batch';
import { record } from '../../src/workers/transactions/record';
import type { TransactionDeps } from '../../src/workers/transactions/deps';
import { callJobs } from '../support/call-jobs';
import { createTestContext, type TestContext } from '../support/harness';
import { account, perSecondRating, seed } from '../support/seed';

const root = path.resolve(__dirname, '../..');

/** `rating rerate ...` from the sources (tsx), on the test's database and queue prefix. */
function rerate(ctx: TestContext, args: string[]): { done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(
    process.execPath,
    [path.join(root, 'node_modules/tsx/dist/cli.mjs'), path.join(root, 'src/cli/rating.ts'), 'rerate', ...args],
    {
      env: {
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        MONGO_DB: ctx.config.mongoDb,
        QUEUE_PREFIX: ctx.config.queuePrefix,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return { done: new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr }))) };
}

/** Issue 34, part 2: `rating rerate`, the dry run and a run followed to its end (the batches done here, as a worker would). */
describe('rating rerate', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const t0 = Date.now() - 600_000;
  const from = new Date(t0 - 60_000).toISOString();
  const to = new Date().toISOString();

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, { ...perSecondRating('39', 0), accounts: [account('bob', { type: 'POSTPAID', balance: 0n })] });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
    const jobs = callJobs(t0);
    for (const [i, seconds] of [20, 40].entries())
      expect(await record(deps, jobs.record(`b${i}`, 'bob', seconds), { id: `j${i}`, deadline: Date.now() + 10_000 })).toMatchObject({
        ok: true,
      });
    await ctx.mongo.collections.rates.updateMany({}, { $set: { rate: 30 } });
    await announceRatingDataChange(ctx);
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('--dry-run prints the changes and changes nothing', async () => {
    const { code, stdout } = await rerate(ctx, ['--from', from, '--to', to, '--dry-run']).done;
    expect(code).toBe(0);
    expect(stdout).toContain('2 records, 2 would change, 0 unchanged, 0 cannot be rated again; difference -30');
    expect(stdout).toContain('account bob: 2 records, difference -30');
    expect((await ctx.mongo.collections.accounts.findOne({ account_tag: 'bob' }))!.balance).toBe(-60n);
  });

  it('a run is followed until the workers finish it', async () => {
    const cli = rerate(ctx, ['--from', from, '--to', to, '--accounts', 'bob', '--no-progress']);
    let run = null;
    for (let i = 0; i < 200 && !run; i++) {
      await new Promise((r) => setTimeout(r, 100));
      run = await ctx.mongo.collections.reratings.findOne({});
    }
    expect(run).not.toBeNull();
    rating.invalidate();
    await processRerateBatch(deps, { rerating_id: run!._id, batch: 0 });
    const { code, stdout } = await cli.done;
    expect(code).toBe(0);
    expect(stdout).toContain(`rerating ${run!._id} done: 2 records, 2 changed, 0 unchanged, 0 skipped; difference -30`);
    expect((await ctx.mongo.collections.accounts.findOne({ account_tag: 'bob' }))!.balance).toBe(-30n);
  });

  it('a bad selection is a usage error', async () => {
    const { code, stderr } = await rerate(ctx, ['--from', to, '--to', from]).done;
    expect(code).toBe(2);
    expect(stderr).toContain('--to: must be after from');
  });
});
