/**
 * `npm run bench:import [-- --calls N --accounts N --accounts-distribution zipf|uniform --rates N --batch-size N --workers N --format csv|asterisk]`
 *
 * Generates a realistic CDR file (calls spread over accounts, destinations over rates with real
 * country-code prefixes), imports it end to end with the real CLI and worker processes, then measures
 * on the same servers the two limits an import cannot beat: raw unordered insertMany of documents of
 * the same size (storage) and raw BullMQ add-and-process of empty jobs (queue).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Queue, Worker } from 'bullmq';
import type { Document } from 'mongodb';
import { loadConfig } from '../src/shared/infra/config';
import { createContext } from '../src/shared/domain/context';
import { createLogger } from '../src/shared/infra/logger';
import { createRedis } from '../src/shared/infra/redis';
import { startLocalServices } from '../src/shared/infra/services/local-services';
import { account, carrier, pricelist, rate, seed } from '../test/support/seed';
import { zipfPicker } from './support/zipf';
import { CpuMeter, cpuSeconds, serverPid, waitForOutput } from './agent/processes';

const root = path.resolve(__dirname, '..');
const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000000' },
    accounts: { type: 'string', default: '10000' },
    rates: { type: 'string', default: '5000' },
    'batch-size': { type: 'string', default: '1000' },
    workers: { type: 'string', default: '2' },
    'max-in-flight': { type: 'string', default: '8' },
    'accounts-distribution': { type: 'string', default: 'zipf' },
    // The same calls as an Asterisk Master.csv (local Berlin times, unanswered calls among them):
    // what the switch-format layer costs against the canonical CSV (docs/BENCHMARKS.md).
    format: { type: 'string', default: 'csv' },
    profile: { type: 'boolean', default: false },
  },
});
const CALLS = Number(values.calls);
const ACCOUNTS = Number(values.accounts);
const RATES = Number(values.rates);
const BATCH = Number(values['batch-size']);
const WORKERS = Number(values.workers);
const DISTRIBUTION = values['accounts-distribution'];
/** `BENCH_CPU_PROF=DIR`: V8 CPU profiles of the workers and the CLI, written to DIR when they exit. */
const cpuProfArgs = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_CPU_PROF] : [];
if (DISTRIBUTION !== 'zipf' && DISTRIBUTION !== 'uniform') throw new Error('--accounts-distribution must be zipf or uniform');
const FORMAT = values.format;
if (FORMAT !== 'csv' && FORMAT !== 'asterisk') throw new Error('--format must be csv or asterisk');

/**
 * Which account makes a call. Real traffic is heavy-tailed: a few trunks and wholesale customers
 * place most calls, most accounts a few a day; Zipf (s = 1) over the accounts models that. `uniform`
 * spreads calls evenly, the worst case for per-account debit aggregation (a 1000-call batch then
 * touches ~950 accounts).
 */
function accountPicker(): () => number {
  if (DISTRIBUTION === 'uniform') return () => Math.floor(Math.random() * ACCOUNTS);
  return zipfPicker(ACCOUNTS);
}

/** Country codes with real-looking area digits after them: 49 30.., 44 20.., 1 212.. */
const COUNTRIES = [
  '1',
  '7',
  '20',
  '27',
  '30',
  '31',
  '32',
  '33',
  '34',
  '36',
  '39',
  '40',
  '41',
  '43',
  '44',
  '45',
  '46',
  '47',
  '48',
  '49',
  '51',
  '52',
  '54',
  '55',
  '56',
  '57',
  '60',
  '61',
  '62',
  '63',
  '64',
  '65',
  '66',
  '81',
  '82',
  '84',
  '86',
  '90',
  '91',
  '92',
  '212',
  '234',
  '351',
  '353',
  '358',
  '380',
  '420',
  '852',
  '971',
  '972',
];

function prefixes(count: number): string[] {
  const out = new Set<string>(COUNTRIES);
  let n = 0;
  while (out.size < count) {
    const cc = COUNTRIES[n++ % COUNTRIES.length];
    out.add(cc + String(Math.floor(Math.random() * 10 ** (1 + (n % 3)))).padStart(1 + (n % 3), '0'));
  }
  return [...out];
}

const pad = (n: number) => String(n).padStart(2, '0');
const iso = (ms: number) => {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}Z`;
};

/** Berlin wall-clock time of an instant, as Asterisk writes it without usegmtime (CET; the generated day has no change of the clocks). */
const berlin = (ms: number) => {
  const d = new Date(ms + 3_600_000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
};

async function writeCalls(file: string, ratePrefixes: string[]): Promise<void> {
  const out = createWriteStream(file);
  if (FORMAT === 'csv') out.write('transaction_tag,account_tag,source,destination,timestamp_begin,timestamp_end,carrier_ip,tags\n');
  const day = Date.UTC(2026, 0, 15);
  const pickAccount = accountPicker();
  for (let i = 0; i < CALLS; i++) {
    const prefix = ratePrefixes[Math.floor(Math.random() * ratePrefixes.length)];
    const destination = prefix + String(Math.floor(Math.random() * 1e8)).padStart(8, '0');
    const begin = day + Math.floor(Math.random() * 86_400_000);
    // Most calls are short, some long: 1 s to about 20 min.
    const seconds = 1 + Math.floor(Math.random() ** 2 * 1200);
    const source = `+3220${String(i % 1e7).padStart(7, '0')}`;
    const line =
      FORMAT === 'csv'
        ? `sw1-${i},acc${pickAccount()},${source},${destination},${iso(begin)},${iso(begin + seconds * 1000)},,bench\n`
        : // 18 columns (loguniqueid, loguserfield); every call answered, so both files carry the same calls.
          `"acc${pickAccount()}","${source}","${destination}","from-internal","""Bench"" <${source}>","PJSIP/${i}-00000001","PJSIP/carrier-00000002","Dial","PJSIP/${destination}@carrier,60,tT","${berlin(begin - 5000)}","${berlin(begin)}","${berlin(begin + seconds * 1000)}",${seconds + 5},${seconds},"ANSWERED","DOCUMENTATION","${Math.floor(begin / 1000)}.${i}",""\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

interface BatchLog {
  lines?: number;
  accounts_debited?: number;
  /** A settlement's log (src/shared/domain/ledger/settlements.ts): the accounts it debited for its batches. */
  settlement_id?: string;
  accounts?: number;
  /** Account debits that missed their compare-and-swap (another batch debited the account first) and were read and tried again. */
  debit_conflicts?: number;
  phase_ms: Record<string, number>;
}

/** `--profile`: the workers' per-batch phase timings (debug log of processImportBatch), summed. */
const profile = {
  batches: 0,
  lines: 0,
  accounts: 0,
  conflicts: 0,
  settlements: 0,
  ms: new Map<string, number>(),
  add(log: BatchLog) {
    if (log.settlement_id) this.settlements += 1;
    else this.batches += 1;
    this.lines += log.lines ?? 0;
    this.accounts += log.accounts_debited ?? log.accounts ?? 0;
    this.conflicts += log.debit_conflicts ?? 0;
    for (const [phase, ms] of Object.entries(log.phase_ms)) this.ms.set(phase, (this.ms.get(phase) ?? 0) + ms);
  },
  report(): string {
    const total = [...this.ms.values()].reduce((a, b) => a + b, 0);
    const parts = [...this.ms].map(([phase, ms]) => `${phase} ${((100 * ms) / total).toFixed(0)}%`);
    return `profile: ${this.batches} batches, ${this.settlements} settlements, ${(this.accounts / Math.max(1, this.lines)).toFixed(2)} account debits per call, ${(this.conflicts / Math.max(1, this.accounts)).toFixed(2)} conflicts per account debit, worker time per batch ${(total / Math.max(1, this.batches)).toFixed(0)} ms: ${parts.join(', ')}`;
  },
};

async function main(): Promise<void> {
  const services = await startLocalServices(
    { mongoUrl: process.env.MONGO_URL || undefined, redisUrl: process.env.REDIS_URL || undefined, dataDir: '' },
    { ephemeral: true },
  );
  const serverKind = process.env.MONGO_URL
    ? 'external MongoDB (MONGO_URL)'
    : 'local MongoDB-wire server (mongod if installed, else mongo-java-server, memory backend)';
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rating-bench-'));
  const env = {
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    MONGO_URL: services.mongoUrl,
    REDIS_URL: services.redisUrl,
    MONGO_DB: `bench_${randomBytes(4).toString('hex')}`,
    QUEUE_PREFIX: `bench${randomBytes(4).toString('hex')}`,
    METRICS_PORT: '0',
  };
  const config = loadConfig(env);
  const ctx = await createContext(config, services, createLogger({ logLevel: 'warn' }, 'bench'));
  const workers: ChildProcess[] = [];
  try {
    const ratePrefixes = prefixes(Math.ceil(RATES / 2));
    const carriers = [carrier('c1', { host: '10.0.0.1' }), carrier('c2', { host: '10.0.0.2' })];
    const rates = ratePrefixes
      .flatMap((p, i) => [
        rate('retail', 'c1', p, { rate: 5 + (i % 40), rate_increment: 60, connect_fee: i % 3 }),
        rate('retail', 'c2', p, { rate: 6 + (i % 37), rate_increment: 1, interval_start: 0 }),
      ])
      .slice(0, RATES);
    await seed(ctx, {
      carriers,
      pricelists: [pricelist('retail')],
      rates,
      accounts: Array.from({ length: ACCOUNTS }, (_, i) => account(`acc${i}`, { balance: 10n ** 12n, pricelist_tags: ['retail'] })),
    });
    const file = path.join(dir, FORMAT === 'csv' ? 'calls.csv' : 'Master.csv');
    let t = Date.now();
    await writeCalls(file, ratePrefixes);
    console.log(
      `generated ${CALLS} calls over ${ACCOUNTS} accounts (${DISTRIBUTION}) and ${rates.length} rates in ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );

    for (let i = 0; i < WORKERS; i++) {
      const child = spawn(process.execPath, [...cpuProfArgs, path.join(root, 'dist', 'workers', 'main.js')], {
        env: { ...env, LOG_LEVEL: values.profile ? 'debug' : 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let partial = '';
      child.stdout!.on('data', (d: Buffer) => {
        out = (out + d.toString()).slice(-20000);
        if (!values.profile) return;
        const lines = (partial + d.toString()).split('\n');
        partial = lines.pop()!;
        for (const line of lines) if (line.includes('"phase_ms"')) profile.add(JSON.parse(line) as BatchLog);
      });
      child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20000)));
      workers.push(child);
      await waitForOutput(child, 'worker ready', () => out);
    }

    // The import, end to end, through the CLI.
    const meter = new CpuMeter([
      ...workers.map((w, i) => ({ name: `worker${i + 1}`, pid: w.pid })),
      { name: 'mongo-wire server', pid: serverPid(services.mongoUrl) },
      { name: 'redis-server', pid: serverPid(services.redisUrl) },
    ]);
    t = Date.now();
    const cli = spawn(
      process.execPath,
      [
        ...cpuProfArgs,
        path.join(root, 'dist', 'cli', 'rating.js'),
        'import',
        file,
        '--batch-size',
        String(BATCH),
        '--max-in-flight',
        values['max-in-flight'],
        ...(FORMAT === 'csv' ? [] : ['--format', FORMAT, '--time-zone', 'Europe/Berlin']),
        '--no-progress',
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let cliOut = '';
    cli.stdout!.on('data', (d: Buffer) => (cliOut += d.toString()));
    cli.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
    // The CLI's CPU time is gone with it: sampled while it runs.
    let cliCpu = 0;
    const sampleCli = setInterval(() => (cliCpu = cpuSeconds(cli.pid!) ?? cliCpu), 200);
    const [code] = (await once(cli, 'exit')) as [number];
    clearInterval(sampleCli);
    const importSeconds = (Date.now() - t) / 1000;
    const importCpu = meter.perUnit(CALLS, 'call', 3);
    console.log(cliOut.trim());
    if (code !== 0) throw new Error(`import exited with ${code}`);
    const importRate = CALLS / importSeconds;
    const workerRss = workers.map((w) => peakRssMb(w.pid!));

    // Storage limit: the same documents, raw, into a fresh collection with the same unique index.
    // The import's records are dropped first: the limit is measured on a server holding what the
    // import started with (a million records in the in-memory server's heap made its garbage
    // collector stall the connection for tens of seconds).
    const sample = (await ctx.mongo.collections.transactions.findOne({})) as Record<string, unknown> | null;
    await ctx.mongo.collections.transactions.drop();
    const raw = ctx.mongo.db.collection('bench_raw_insert');
    await raw.createIndex({ account_tag: 1, transaction_tag: 1 }, { unique: true });
    // A warm-up (the server has just freed the import's records), then two timed passes: the faster
    // one is the limit, so a pass slowed by the server's collector or by a neighbour on the cores
    // cannot make the import look closer to storage than it is.
    const storagePassDocs = Math.min(CALLS, 100_000);
    let written = 0;
    const insertRaw = async (count: number) => {
      for (let done = 0; done < count; done += BATCH) {
        const docs = Array.from({ length: Math.min(BATCH, count - done) }, (_, i) => ({
          ...sample!,
          _id: randomUUID() as string,
          transaction_tag: `raw-${written + done + i}`,
        }));
        await raw.insertMany(docs as Document[], { ordered: false });
      }
      written += count;
    };
    await insertRaw(Math.min(CALLS, 20_000));
    const storageMeter = new CpuMeter([
      { name: 'bench (client)', pid: process.pid },
      { name: 'mongo-wire server', pid: serverPid(services.mongoUrl) },
    ]);
    const storagePasses: number[] = [];
    for (let pass = 0; pass < 2; pass++) {
      t = Date.now();
      await insertRaw(storagePassDocs);
      storagePasses.push(storagePassDocs / ((Date.now() - t) / 1000));
    }
    const storageRate = Math.max(...storagePasses);
    const storageDocs = 2 * storagePassDocs;
    const storageCpu = storageMeter.perUnit(storageDocs, 'document', 3);
    await raw.drop();

    // Queue limit: empty jobs added in bulk and processed by one in-process worker.
    const jobs = Math.min(CALLS, 50_000);
    const connection = createRedis(services.redisUrl);
    const queue = new Queue('bench-empty', { connection, prefix: config.queuePrefix, defaultJobOptions: { removeOnComplete: true } });
    let processed = 0;
    let resolveAll: () => void = () => undefined;
    const all = new Promise<void>((r) => (resolveAll = r));
    const workerConnection = createRedis(services.redisUrl);
    const worker = new Worker(
      'bench-empty',
      async () => {
        if (++processed === jobs) resolveAll();
      },
      { connection: workerConnection, prefix: config.queuePrefix, concurrency: 100 },
    );
    t = Date.now();
    for (let added = 0; added < jobs; added += 1000) {
      await queue.addBulk(Array.from({ length: Math.min(1000, jobs - added) }, () => ({ name: 'empty', data: {} })));
    }
    await all;
    const queueRate = jobs / ((Date.now() - t) / 1000);
    await worker.close();
    await queue.close();
    connection.disconnect();
    workerConnection.disconnect();

    const limit = Math.min(storageRate, queueRate);
    console.log(
      `conditions: ${CALLS} calls (${FORMAT}), ${ACCOUNTS} accounts (${DISTRIBUTION}), ${rates.length} rates, batch size ${BATCH}, ${WORKERS} worker processes (WORKER_CONCURRENCY ${config.workerConcurrency}), ${os.cpus().length} cores, server: ${serverKind}`,
    );
    console.log(
      `storage limit measured with 2 passes of ${storagePassDocs} documents of the records' size after a warm-up (${storagePasses.map((r) => Math.round(r)).join(' and ')} docs/s; the faster counts); queue limit with ${jobs} empty jobs`,
    );
    if (values.profile) console.log(profile.report());
    console.log(`import ${importCpu}; CLI ${((1000 * cliCpu) / CALLS).toFixed(3)} (sampled every 200 ms)`);
    console.log(`storage limit ${storageCpu}`);
    console.log(`peak RSS: worker processes ${workerRss.join(', ')} MB; CLI in its summary above`);
    // Issue 12 measures imports against the storage limit (the raw insertMany rate); the ratio to the
    // smaller of the two limits is kept beside it, as earlier figures in docs/BENCHMARKS.md used it.
    console.log(
      `import: ${Math.round(importRate)}; storage limit: ${Math.round(storageRate)}; queue limit: ${Math.round(queueRate)}; ratio to storage: ${(importRate / storageRate).toFixed(2)}; ratio to the smaller limit: ${(importRate / limit).toFixed(2)}`,
    );
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(workers.map((w) => (w.exitCode === null ? once(w, 'exit') : undefined)));
    await ctx.mongo.db.dropDatabase().catch(() => undefined);
    await ctx.close();
    await services.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
