import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestContext, type TestContext } from '../../support/harness';
import { announceRatingDataChange } from '../../../src/shared/domain/rating-data/cache';

const root = path.resolve(__dirname, '../../..');

/** `rating rates import ...` from the sources (tsx), on the test's database and queue prefix. */
function rates(ctx: TestContext, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [path.join(root, 'node_modules/tsx/dist/cli.mjs'), path.join(root, 'src/cli/rating.ts'), 'rates', ...args],
    {
      env: {
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        MONGO_URL: process.env.MONGO_URL,
        REDIS_URL: process.env.REDIS_URL,
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
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

function deckFile(content: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'rate-deck-')), 'deck.csv');
  writeFileSync(file, content);
  return file;
}

describe('rating rates import', () => {
  let ctx: TestContext;
  const version = async () => Number((await ctx.redis.get(`${ctx.config.queuePrefix}:rating-data:version`)) ?? 0);

  beforeAll(async () => {
    ctx = await createTestContext();
    // The version starts at a random value with the first change (announced-version.ts): one change
    // first, so that each case counts its own from a known version.
    await announceRatingDataChange(ctx);
    await ctx.mongo.collections.pricelists.insertOne({ _id: 'p1', pricelist_tag: 'retail', name: null, currency: 'USD' });
    await ctx.mongo.collections.carriers.insertOne({
      _id: 'c1',
      carrier_tag: 'acme',
      host: '10.0.0.1',
      port: 5060,
      protocol: 'UDP',
      active: true,
    });
  });

  afterAll(async () => {
    await ctx.destroy();
  });

  const args = (file: string, ...more: string[]) => [
    'import',
    file,
    '--pricelist',
    'retail',
    '--carrier',
    'acme',
    '--effective',
    '2026-07-01T00:00:00Z',
    '--no-progress',
    ...more,
  ];

  it('imports a deck: exit 0 and the summary line; a second run is all unchanged', async () => {
    const file = deckFile('prefix,rate,description\n44,10,UK\n49,12,Germany\n');
    const dry = await rates(ctx, args(file, '--dry-run'));
    expect(dry.code).toBe(0);
    expect(dry.stdout.trim()).toBe('rates import: 2 added, 0 changed, 0 unchanged, 0 removed, 0 rejected');
    expect(await ctx.mongo.collections.rates.countDocuments()).toBe(0);

    const v0 = await version();
    const first = await rates(ctx, args(file));
    expect(first).toMatchObject({ code: 0, stdout: 'rates import: 2 added, 0 changed, 0 unchanged, 0 removed, 0 rejected\n' });
    expect(await version()).toBe(v0 + 1);
    // Effective in the past: the calls since then were rated at the earlier prices; the rerating to run is printed.
    expect(first.stderr).toContain(
      'calls that started since 2026-07-01T00:00:00.000Z were rated at the earlier prices until this deck was applied: correct them with rating rerate --from 2026-07-01T00:00:00.000Z --to ',
    );
    expect(first.stderr).toContain(' --pricelist retail --carrier acme (--dry-run first)');
    const second = await rates(ctx, args(file));
    expect(second).toMatchObject({ code: 0, stdout: 'rates import: 0 added, 0 changed, 2 unchanged, 0 removed, 0 rejected\n' });
    expect(second.stderr).not.toContain('rating rerate'); // nothing changed
    expect(await version()).toBe(v0 + 1);
  });

  it('exit 1 with rejected lines on stderr', async () => {
    const run = await rates(ctx, args(deckFile('prefix,rate,description\n44,11,UK\n49,x,Germany\n')));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('rates import: 0 added, 1 changed, 0 unchanged, 0 removed, 1 rejected\n');
    expect(run.stderr).toContain('line 3: BAD_USER_INPUT: rate: must be an integer');
  });

  it('exit 2 when refused: unknown pricelist, bad header, bad options', async () => {
    const file = deckFile('prefix,rate\n44,1\n');
    const unknown = await rates(ctx, ['import', file, '--pricelist', 'nope', '--carrier', 'acme']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/refused: pricelist_tag: no pricelist "nope"; nothing was written/);
    const header = await rates(ctx, args(deckFile('prefix,cost\n44,1\n')));
    expect(header.code).toBe(2);
    expect(header.stderr).toMatch(/bad header/);
    expect((await rates(ctx, ['import', file, '--carrier', 'acme'])).code).toBe(2);
    expect((await rates(ctx, args(file, '--effective', 'soon'))).stderr).toMatch(/--effective/);
    expect(await ctx.mongo.collections.rates.countDocuments({ rate: 1 })).toBe(0);
  });
});
