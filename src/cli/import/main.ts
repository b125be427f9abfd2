/**
 * `rating import FILE`: streams a CSV or JSON-lines file of finished calls into the `imports` queue in
 * batches and reports what happened to every line. docs/IMPORTS.md describes the format and guarantees.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { Transform } from 'node:stream';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { createContext } from '../../shared/domain/context';
import { QueueNames } from '../../shared/domain/queues/names';
import { bullmqPrefix, createQueueEvents } from '../../shared/domain/queues/queues';
import { IMPORT_ID_PATTERN, openImport } from '../../shared/domain/ledger';
import {
  BatchSubmitter,
  BUILTIN_FORMAT_NAMES,
  builtinMapping,
  CdrFormat,
  ContentId,
  feedRecords,
  formatOf,
  HeaderError,
  isBuiltinFormat,
  MappingError,
  parseMapping,
  Totals,
  UnknownZone,
  type Format,
  type Mapping,
} from '../../shared/domain/imports';
import { Progress } from './progress';
import { RejectWriter } from './rejects';
import { formatSummary } from './summary';
import { commandConfig, serviceServers } from '../servers';
import { reportFailure as reportCliFailure, UsageError } from '../failure';

export const USAGE = `usage: rating import FILE|- [options]
  --format F             input format: csv or jsonl (default: by extension, .jsonl/.ndjson = JSON lines,
                         else CSV), or a switch's own: ${BUILTIN_FORMAT_NAMES.join(', ')}
  --map MAPPING.json     any other layout: which columns hold the call, how times are written, which
                         rows are answered calls (docs/IMPORTS.md, "Mapping files")
  --time-zone ZONE       the switch's time zone (IANA name, e.g. Europe/Berlin) for formats that write
                         local times (asterisk, freeswitch, mappings with time.format datetime)
  --batch-size N         calls per batch (default 1000; a rerun keeps the first run's size)
  --rejects PATH         reject file (default FILE.rejects.csv, or import-<id>.rejects.csv for stdin)
  --import-id ID         name of the import (default: hash of the file; required to resume stdin)
  --max-in-flight N      batches queued or processing at once (default 8)
  --no-progress          no progress output
Talks to the service's servers: MONGO_URL and REDIS_URL or REDIS_CLUSTER_NODES (and QUEUE_PREFIX, MONGO_DB)
as the service uses, else those of a running \`npm start\` with the same DATA_DIR. Workers must be running.
Exit status: 0 every line recorded (or already recorded), 1 some lines rejected, 2 the import failed.`;

interface Options {
  file: string;
  format: Format;
  /** A switch's format (--format NAME or --map FILE), read instead of `format`. */
  cdr: CdrFormat | null;
  batchSize: number | undefined;
  rejects: string | undefined;
  importId: string | undefined;
  maxInFlight: number;
  progress: boolean;
}

function positiveInt(name: string, value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) throw new UsageError(`${name} must be an integer from 1 to ${max}`);
  return Number(value);
}

export function parseOptions(argv: string[]): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      format: { type: 'string' },
      map: { type: 'string' },
      'time-zone': { type: 'string' },
      'batch-size': { type: 'string' },
      rejects: { type: 'string' },
      'import-id': { type: 'string' },
      'max-in-flight': { type: 'string' },
      'no-progress': { type: 'boolean' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('give exactly one FILE (or - for standard input)');
  const importId = values['import-id'];
  if (importId !== undefined && !IMPORT_ID_PATTERN.test(importId)) throw new UsageError('--import-id: 1-64 letters, digits, "_" or "-"');
  const cdr = switchFormat(values.format, values.map, values['time-zone']);
  let format: Format = 'csv';
  if (!cdr) {
    try {
      format = formatOf(positionals[0], values.format);
    } catch (err) {
      throw new UsageError(`${(err as Error).message.replace('csv or jsonl', `csv, jsonl, ${BUILTIN_FORMAT_NAMES.join(', ')}`)}`);
    }
  }
  return {
    file: positionals[0],
    format,
    cdr,
    batchSize: positiveInt('--batch-size', values['batch-size'], 10000),
    rejects: values.rejects,
    importId,
    maxInFlight: positiveInt('--max-in-flight', values['max-in-flight'], 1000) ?? 8,
    progress: !values['no-progress'],
  };
}

/**
 * A switch's format: a named one (src/shared/domain/imports/cdr/builtin.ts) or a mapping file, with the time
 * zone its local times are read in. Null for csv and jsonl. Every problem is a usage error (exit 2),
 * found before anything is read or sent.
 */
function switchFormat(name: string | undefined, mapFile: string | undefined, zone: string | undefined): CdrFormat | null {
  if (mapFile !== undefined && name !== undefined) throw new UsageError('give --format or --map, not both: a mapping file is the format');
  let mapping: Mapping;
  try {
    if (mapFile !== undefined) {
      let text: string;
      try {
        text = readFileSync(mapFile, 'utf8');
      } catch (err) {
        throw new UsageError(`--map ${mapFile}: ${(err as Error).message}`);
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (err) {
        throw new UsageError(`--map ${mapFile}: not JSON (${(err as Error).message})`);
      }
      mapping = parseMapping(json);
    } else if (name !== undefined && isBuiltinFormat(name)) mapping = builtinMapping(name);
    else {
      if (zone !== undefined)
        throw new UsageError('--time-zone is for switch formats (--format NAME or --map FILE); csv and jsonl times carry their zone');
      return null;
    }
    return new CdrFormat(mapping, zone ?? null);
  } catch (err) {
    if (err instanceof MappingError || err instanceof UnknownZone)
      throw new UsageError(`${mapFile !== undefined ? `--map ${mapFile}: ` : ''}${err.message}`);
    throw err;
  }
}

/** The default import id: the same content in the same format is the same import (reruns resume it). */
async function contentId(path: string, format: string): Promise<string> {
  const hash = new ContentId(format);
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.id();
}

export async function runImport(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  const config = await commandConfig({ redis: true });
  if (!config) return 2;
  const servers = serviceServers(config);
  const stdin = options.file === '-';
  const totalBytes = stdin ? null : statSync(options.file).size;
  let importId = options.importId;
  if (!importId && stdin) {
    importId = `stdin-${randomUUID()}`;
    console.error(`reading standard input without --import-id: using ${importId}; rerun with --import-id ${importId} to resume it`);
  }
  importId ??= await contentId(options.file, options.cdr?.key ?? options.format);
  const rejects = new RejectWriter(options.rejects ?? (stdin ? `import-${importId}.rejects.csv` : `${options.file}.rejects.csv`));

  const logger = pino({ name: 'import', level: config.logLevel }, pino.destination(2));
  const ctx = await createContext(config, servers, logger);
  const events = createQueueEvents(ctx.newRedis(), bullmqPrefix(config), QueueNames.imports);
  events.on('error', (err) => logger.debug({ err }, 'imports queue events'));
  const started = Date.now();
  const totals = new Totals();
  let bytes = 0;
  let progress: Progress | undefined;
  let submitter: BatchSubmitter | undefined;
  try {
    const requested = options.batchSize ?? 1000;
    const record = await openImport(ctx.mongo.db, { _id: importId, batch_size: requested, source: stdin ? 'stdin' : options.file });
    if (options.batchSize !== undefined && record.batch_size !== options.batchSize) {
      console.error(
        `import ${importId} was started with --batch-size ${record.batch_size}; a rerun must cut the same batches (use that size, or another --import-id)`,
      );
      return 2;
    }
    const batchSize = record.batch_size;
    await events.waitUntilReady();

    // Raw text of accepted lines whose batch has not answered yet, for the reject file (bounded by the in-flight cap).
    const pendingRaw = new Map<number, string>();
    submitter = new BatchSubmitter(ctx.queues.imports, events, ctx.mongo.db, options.maxInFlight, async (result, lines) => {
      totals.add(result);
      for (const r of result.refused) {
        await rejects.write(r.line, r.account_tag ? `${r.reason}: ${r.account_tag}` : r.reason, pendingRaw.get(r.line) ?? '');
      }
      for (const l of lines) pendingRaw.delete(l.line);
    });
    progress = new Progress(() => ({ read: totals.lines, done: totals.done, rejected: totals.rejected, bytes }), totalBytes, {
      tty: Boolean(process.stderr.isTTY),
      intervalMs: 5000,
      enabled: options.progress,
    });

    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
    });
    const input = (stdin ? process.stdin : createReadStream(options.file)).pipe(counter);
    await feedRecords(input, {
      importId,
      format: options.format,
      cdr: options.cdr ?? undefined,
      batchSize,
      submitter,
      totals,
      onInvalid: (line, reason, raw) => rejects.write(line, reason, raw),
      onAccepted: (rec) => pendingRaw.set(rec.line, rec.raw),
      onHeader: (line, raw) => rejects.setHeader(line, raw),
    });
    await submitter.drain();
    progress.stop();
    await rejects.close();
    console.log(
      formatSummary(totals, {
        importId,
        source: stdin ? 'stdin' : options.file,
        format: options.cdr?.name ?? options.format,
        batchSize,
        rejectsPath: rejects.count > 0 ? rejects.path : null,
        seconds: (Date.now() - started) / 1000,
        peakRssBytes: process.resourceUsage().maxRSS * 1024,
      }),
    );
    return totals.rejected > 0 ? 1 : 0;
  } catch (err) {
    progress?.stop();
    await rejects.close().catch(() => undefined);
    if (err instanceof HeaderError) {
      console.error(err.message);
      return 2;
    }
    throw err;
  } finally {
    submitter?.close();
    await events.close().catch(() => undefined);
    await ctx.close();
  }
}

export function reportFailure(err: unknown): number {
  return reportCliFailure(err, USAGE, 'import', 'nothing is charged twice: run the same command again to finish the import');
}
