/**
 * `rating rerate --from T --to T [selection] [--dry-run]`: rates the selected calls again at the prices
 * valid when they started and corrects each changed fee through the ledger (docs/RERATING.md). The dry
 * run prints what would change; a run is started in the workers of the service and followed with a
 * progress bar until it is done (or left to run with --no-wait).
 */
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import pino from 'pino';
import { createContext, type AppContext } from '../shared/domain/context';
import { RatingDataCache } from '../shared/domain/rating-data/cache';
import {
  previewRerating,
  selectionProblem,
  startRerating,
  type RerateSelection,
  type ReratingDoc,
  type ReratingPreview,
} from '../shared/domain/rerating';
import { prefix as prefixText, tag } from '../shared/domain/validation/text';
import { parseDateTime } from '../shared/domain/validation/datetime';
import { commandConfig, serviceServers } from './servers';
import { reportFailure as reportCliFailure, UsageError } from './failure';

export const USAGE = `usage: rating rerate --from T --to T [options]
  --from T, --to T   calls that started from T (inclusive) to T (exclusive), ISO 8601 in UTC (Z or no zone)
  --accounts A,B     only these accounts' records (a parent's records are its share of its children's calls)
  --pricelist P      only records charged with a rate of this pricelist
  --carrier C        only records charged with a rate of this carrier
  --prefix D         only records whose destination starts with these digits
  --dry-run          print what would change (per account, and the biggest changes); change nothing
  --sample N         how many of the biggest changes the dry run prints (default 10)
  --no-wait          start the run and exit; follow it in the console or with the API (Rerating)
  --no-progress      no progress bar
Each selected record is rated again with the rates stored now, at the prices valid when its call started,
on the carrier it went out on; a changed fee is corrected through the ledger once (docs/RERATING.md).
A run's batches are done by the service's workers: \`npm start\` (or its workers) must be running.
Talks to the service's servers: MONGO_URL and REDIS_URL or REDIS_CLUSTER_NODES (and MONGO_DB, QUEUE_PREFIX)
as the service uses, else those of a running \`npm start\` with the same DATA_DIR.
Exit status: 0 done (or started, with --no-wait), 2 failed (the run, if started, goes on in the workers).`;

export interface RerateOptions {
  selection: RerateSelection;
  dryRun: boolean;
  sample: number;
  wait: boolean;
  progress: boolean;
}

function usage<T>(option: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new UsageError(`${option}: ${(err as Error).message}`);
  }
}

export function parseRerate(argv: string[]): RerateOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      accounts: { type: 'string' },
      pricelist: { type: 'string' },
      carrier: { type: 'string' },
      prefix: { type: 'string' },
      'dry-run': { type: 'boolean' },
      sample: { type: 'string' },
      'no-wait': { type: 'boolean' },
      'no-progress': { type: 'boolean' },
    },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const time = (option: '--from' | '--to', value: string | undefined): Date => {
    if (value === undefined) throw new UsageError(`${option} is required`);
    const parsed = parseDateTime(value);
    if (!parsed) throw new UsageError(`${option} must be an ISO 8601 datetime like 2026-11-01T00:00:00Z`);
    return parsed;
  };
  const selection: RerateSelection = {
    from: time('--from', values.from),
    to: time('--to', values.to),
    account_tags:
      values.accounts === undefined ? null : usage('--accounts', () => values.accounts!.split(',').map((a) => tag('account', a.trim()))),
    pricelist_tag: values.pricelist === undefined ? null : usage('--pricelist', () => tag('pricelist', values.pricelist!)),
    carrier_tag: values.carrier === undefined ? null : usage('--carrier', () => tag('carrier', values.carrier!)),
    prefix: values.prefix === undefined ? null : usage('--prefix', () => prefixText('prefix', values.prefix!)),
  };
  const problem = selectionProblem(selection);
  if (problem) throw new UsageError(`--${problem}`);
  const sample = values.sample === undefined ? 10 : Number(values.sample);
  if (!Number.isInteger(sample) || sample < 0 || sample > 1000) throw new UsageError('--sample must be an integer from 0 to 1000');
  return { selection, dryRun: values['dry-run'] === true, sample, wait: !values['no-wait'], progress: !values['no-progress'] };
}

function printPreview(preview: ReratingPreview): void {
  console.log(
    `dry run (nothing changed): ${preview.records} records, ${preview.changed} would change, ${preview.unchanged} unchanged, ` +
      `${preview.unrated} cannot be rated again; difference ${preview.difference} (new fees less old)`,
  );
  for (const a of preview.accounts) console.log(`  account ${a.account_tag}: ${a.records} records, difference ${a.difference}`);
  for (const c of preview.sample)
    console.log(
      `  record ${c.id} (${c.account_tag}/${c.transaction_tag}, ${c.timestamp_begin?.toISOString() ?? '-'}): ${c.fee_before} -> ${c.fee_after}`,
    );
}

const summary = (run: ReratingDoc) =>
  `rerating ${run._id} ${run.state}: ${run.counts.seen} records, ${run.counts.changed} changed, ${run.counts.unchanged} unchanged, ` +
  `${run.counts.skipped} skipped; difference ${run.difference}`;

/** Follows a run until it is done: a bar on a terminal, a line every 5 s otherwise. */
async function follow(ctx: AppContext, run: ReratingDoc, total: number, progress: boolean): Promise<ReratingDoc> {
  const tty = progress && Boolean(process.stderr.isTTY);
  const bar = tty
    ? new SingleBar({
        format: ' {bar} {percentage}% | {value}/{total} records | {changed} changed',
        stream: process.stderr,
        hideCursor: true,
      })
    : undefined;
  bar?.start(Math.max(total, 1), 0, { changed: 0 });
  let last = run;
  let lastMoved = Date.now();
  let lastLine = 0;
  let warned = false;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = await ctx.mongo.collections.reratings.findOne({ _id: run._id });
    if (!now) throw new Error(`rerating ${run._id} disappeared`);
    if (now.batch !== last.batch) lastMoved = Date.now();
    last = now;
    bar?.update(Math.min(now.counts.seen, Math.max(total, 1)), { changed: now.counts.changed });
    if (!tty && progress && Date.now() - lastLine > 5000) {
      process.stderr.write(`progress: ${now.counts.seen}/${total} records, ${now.counts.changed} changed\n`);
      lastLine = Date.now();
    }
    if (now.state === 'done') break;
    if (!warned && Date.now() - lastMoved > 30_000) {
      process.stderr.write('no batch done for 30 s: are the workers running (npm start)? The run goes on when they are.\n');
      warned = true;
    }
  }
  bar?.stop();
  return last;
}

async function rerate(argv: string[]): Promise<number> {
  const options = parseRerate(argv);
  const config = await commandConfig({ redis: true });
  if (!config) return 2;
  const logger = pino({ name: 'rerate', level: config.logLevel }, pino.destination(2));
  const ctx = await createContext(config, serviceServers(config), logger);
  try {
    if (options.dryRun) {
      const rating = await RatingDataCache.start(ctx);
      try {
        printPreview(await previewRerating(ctx.mongo.collections, await rating.index(), options.selection, options.sample));
      } finally {
        await rating.close();
      }
      return 0;
    }
    const run = await startRerating(ctx.mongo.collections, ctx.queues.imports, options.selection);
    const total = run.total ?? 0;
    console.error(`rerating ${run._id} started over ${total} records`);
    if (!options.wait) {
      console.log(summary(run));
      return 0;
    }
    console.log(summary(await follow(ctx, run, total, options.progress)));
    return 0;
  } finally {
    await ctx.close();
  }
}

export async function runRerate(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  return rerate(argv).catch((err: unknown) =>
    reportCliFailure(
      err,
      USAGE,
      'rerate',
      'a run already started goes on in the workers; see it with the API (allReratings) or the console',
    ),
  );
}
