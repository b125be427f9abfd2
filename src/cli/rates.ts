/**
 * `rating rates import DECK.csv --pricelist P --carrier C [--effective T] [--dry-run]`: loads a
 * carrier's rate deck into one pricelist with an effective time (src/shared/domain/rate-decks,
 * docs/RATE-DECKS.md). Progress on stderr, rejected lines on stderr as `line N: reason`, and a last
 * summary line on stdout.
 */
import { createReadStream, statSync } from 'node:fs';
import { Transform } from 'node:stream';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { createContext } from '../shared/domain/context';
import { applyDeck, DeckError, parseEffective, summaryLine, type DeckProgress, type DeckReport } from '../shared/domain/rate-decks';
import { announceRatingDataChange } from '../shared/domain/rating-data/cache';
import { tag } from '../shared/domain/validation/text';
import { Progress } from './import/progress';
import { commandConfig, serviceServers } from './servers';
import { reportFailure as reportCliFailure, UsageError } from './failure';

export const USAGE = `usage: rating rates import DECK.csv|- --pricelist TAG --carrier TAG [options]
  --effective T      when the deck takes effect, ISO 8601 (2026-07-01T00:00:00Z; no zone = UTC); default now
  --dry-run          plan and report, write nothing
  --chunk-size N     prefixes read and written together (default 1000)
  --no-progress      no progress output
The deck is CSV with a header: prefix,rate[,connect_fee,rate_increment,interval_start,description]
(integers in minor units), and optionally a timing: days (1-5, mon-fri), start_time and end_time
(HH:MM[:SS]), holidays (only, exclude). Every rate of the deck (a prefix and its timing) is added,
changed (old terms end at the effective time, new ones start there) or unchanged; rates of the
pricelist and carrier missing from the deck stop at the effective time (removed). Running the same deck again with the same time changes nothing.
Talks to the service's servers: MONGO_URL and REDIS_URL or REDIS_CLUSTER_NODES (and MONGO_DB, QUEUE_PREFIX)
as the service uses, else those of a running \`npm start\` with the same DATA_DIR.
Exit status: 0 every line applied, 1 some lines rejected, 2 the import failed (nothing or part written: run it again).`;

export interface RatesImportOptions {
  file: string;
  pricelist: string;
  carrier: string;
  effective: Date;
  dryRun: boolean;
  chunkSize: number;
  progress: boolean;
}

function usageTag(option: string, value: string | undefined): string {
  if (value === undefined) throw new UsageError(`${option} is required`);
  try {
    return tag(option, value);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function parseRatesImport(argv: string[], now: Date = new Date()): RatesImportOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      pricelist: { type: 'string' },
      carrier: { type: 'string' },
      effective: { type: 'string' },
      'dry-run': { type: 'boolean' },
      'chunk-size': { type: 'string' },
      'no-progress': { type: 'boolean' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('give exactly one deck FILE (or - for standard input)');
  let effective = now;
  if (values.effective !== undefined) {
    const parsed = parseEffective(values.effective);
    if (!parsed) throw new UsageError('--effective must be an ISO 8601 datetime like 2026-07-01T00:00:00Z');
    effective = parsed;
  }
  const chunk = values['chunk-size'];
  if (chunk !== undefined && (!/^\d+$/.test(chunk) || Number(chunk) < 1 || Number(chunk) > 10000))
    throw new UsageError('--chunk-size must be an integer from 1 to 10000');
  return {
    file: positionals[0],
    pricelist: usageTag('--pricelist', values.pricelist),
    carrier: usageTag('--carrier', values.carrier),
    effective,
    dryRun: values['dry-run'] === true,
    chunkSize: chunk === undefined ? 1000 : Number(chunk),
    progress: !values['no-progress'],
  };
}

async function ratesImport(argv: string[]): Promise<number> {
  const options = parseRatesImport(argv);
  const config = await commandConfig({ redis: true });
  if (!config) return 2;
  const servers = serviceServers(config);
  const stdin = options.file === '-';
  const totalBytes = stdin ? null : statSync(options.file).size;
  const logger = pino({ name: 'rates-import', level: config.logLevel }, pino.destination(2));
  const ctx = await createContext(config, servers, logger);
  let bytes = 0;
  let announceFailed: Error | null = null;
  let counts: DeckProgress = { phase: 'deck', lines: 0, added: 0, changed: 0, unchanged: 0, removed: 0, rejected: 0 };
  const progress = new Progress(
    () => ({
      read: counts.lines,
      done: counts.added + counts.changed + counts.unchanged + counts.rejected,
      rejected: counts.rejected,
      bytes,
    }),
    totalBytes,
    { tty: Boolean(process.stderr.isTTY), intervalMs: 5000, enabled: options.progress },
  );
  try {
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
    });
    const source = stdin ? process.stdin : createReadStream(options.file);
    source.on('error', (err: Error) => counter.destroy(err));
    const started = Date.now();
    const report = await applyDeck(ctx.mongo.collections, source.pipe(counter), {
      pricelist_tag: options.pricelist,
      carrier_tag: options.carrier,
      effective: options.effective,
      dryRun: options.dryRun,
      chunkSize: options.chunkSize,
      announce: async () => {
        try {
          await announceRatingDataChange(ctx);
          announceFailed = null;
        } catch (err) {
          announceFailed = err as Error;
        }
      },
      onProgress: (p) => (counts = p),
      onRejected: (r) => process.stderr.write(`line ${r.line}: ${r.reason}\n`),
      keepRejected: 0,
    });
    progress.stop();
    const seconds = (Date.now() - started) / 1000;
    console.error(
      `${options.dryRun ? 'dry run (nothing written): ' : ''}${report.lines} lines in ${seconds.toFixed(1)} s, effective ${report.effective}, pricelist ${options.pricelist}, carrier ${options.carrier}`,
    );
    console.log(summaryLine(report));
    if (report.removals_skipped) console.error(report.removals_skipped);
    const hint = rerateHint(report, options, new Date());
    if (hint) console.error(hint);
    if (announceFailed) {
      // The rates are written; a rerun writes nothing and so would not announce them either.
      console.error(
        `rates were written but the change could not be announced over Redis (${(announceFailed as Error).message}): ` +
          'running processes keep their old rating index until the next change of rating data (any rate, pricelist or carrier write)',
      );
      return 2;
    }
    return report.rejected_count > 0 ? 1 : 0;
  } catch (err) {
    progress.stop();
    if (err instanceof DeckError) {
      console.error(`rates import refused: ${err.message}; nothing was written`);
      return 2;
    }
    throw err;
  } finally {
    await ctx.close();
  }
}

/** `rating rates <subcommand>`. */
export async function runRates(argv: string[]): Promise<number> {
  const [sub, ...args] = argv;
  if (sub === undefined || sub === 'help' || args.includes('--help') || args.includes('-h') || sub === '--help') {
    console.log(USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'import') {
    console.error(`unknown rates command "${sub}"\n\n${USAGE}`);
    return 2;
  }
  return ratesImport(args).catch(reportFailure);
}

export function reportFailure(err: unknown): number {
  return reportCliFailure(
    err,
    USAGE,
    'rates import',
    'run the same command again to finish it: prefixes already applied come back unchanged',
  );
}

/**
 * A deck effective before it was fully applied (the default, now, or a time in the past): calls that
 * started since T were rated at the prices before it until the processes rebuilt their rating data, while
 * the rates' history says the deck's prices applied from T. The rerating that corrects them, to run.
 */
export function rerateHint(
  report: Pick<DeckReport, 'dry_run' | 'added' | 'changed' | 'removed' | 'effective'>,
  options: { pricelist: string; carrier: string },
  now: Date,
): string | null {
  if (report.dry_run || report.added + report.changed + report.removed === 0) return null;
  if (new Date(report.effective).getTime() >= now.getTime()) return null;
  return (
    `calls that started since ${report.effective} were rated at the earlier prices until this deck was applied: ` +
    `correct them with rating rerate --from ${report.effective} --to ${now.toISOString()} --pricelist ${options.pricelist} --carrier ${options.carrier} (--dry-run first)`
  );
}
