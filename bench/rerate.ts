/**
 * `npm run bench:rerate [-- --records N --accounts N --workers N]`
 *
 * Rerating speed, end to end (docs/RERATING.md): N charged records (calls of 1 to 600 s over `accounts`
 * accounts, their charges in the ledger) are written straight to the store, the price of their rate
 * changes, and `rating rerate` runs over all of them with real worker processes; it prints records per
 * second, the CPU of each process, and the ledger audit afterwards (must be 0 differences). Compare
 * with `npm run bench:import` run on the same machine just before or after (records per second of an
 * import of the same size).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/shared/infra/config';
import { createContext } from '../src/shared/domain/context';
import { createLogger } from '../src/shared/infra/logger';
import { startLocalServices } from '../src/shared/infra/services/local-services';
import { auditLedger } from '../src/shared/domain/ledger/audit';
import { announceRatingDataChange } from '../src/shared/domain/rating-data/cache';
import type { LedgerEntryDoc } from '../src/shared/domain/ledger';
import type { TransactionDoc } from '../src/shared/domain/types';
import { account, carrier, pricelist, rate, seed } from '../test/support/seed';
import { CpuMeter, serverPid, waitForOutput } from './agent/processes';

const root = path.resolve(__dirname, '..');
const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    accounts: { type: 'string', default: '1000' },
    workers: { type: 'string', default: '2' },
  },
});
const RECORDS = Number(values.records);
const ACCOUNTS = Number(values.accounts);
const WORKERS = Number(values.workers);

async function main(): Promise<void> {
  const services = await startLocalServices(
    { mongoUrl: process.env.MONGO_URL || undefined, redisUrl: process.env.REDIS_URL || undefined, dataDir: '' },
    { ephemeral: true },
  );
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
  const ctx = await createContext(loadConfig(env), services, createLogger({ logLevel: 'warn' }, 'bench'));
  const workers: ChildProcess[] = [];
  try {
    const tags = Array.from({ length: ACCOUNTS }, (_, i) => `acct${i}`);
    await seed(ctx, {
      carriers: [carrier('c1')],
      pricelists: [pricelist('pl')],
      rates: [rate('pl', 'c1', '39', { rate: 60, rate_increment: 1 })],
      accounts: tags.map((t) => account(t, { type: 'POSTPAID', balance: 0n, pricelist_tags: ['pl'] })),
    });
    // Charged records and their charges, as processing leaves them; balances to match.
    let t = Date.now();
    const start = Date.now() - 86_400_000;
    const owed = new Map<string, bigint>();
    for (let done = 0; done < RECORDS; done += 5000) {
      const records: TransactionDoc[] = [];
      const entries: LedgerEntryDoc[] = [];
      for (let i = done; i < Math.min(done + 5000, RECORDS); i++) {
        const tag = tags[i % ACCOUNTS];
        const duration = 1 + (i % 600);
        const begin = new Date(start + i * 500);
        const id = randomUUID();
        records.push({
          _id: id,
          transaction_tag: `call-${i}`,
          account_tag: tag,
          origin_account_tag: tag,
          source: '100',
          source_ip: null,
          destination: `39${String(i).padStart(8, '0')}`,
          carrier_ip: 'c1.example.net:5060',
          tags: null,
          authorized: true,
          unauthorized_reason: null,
          destination_rate: {
            pricelist_tag: 'pl',
            carrier_tag: 'c1',
            prefix: '39',
            connect_fee: 0,
            rate: 60,
            rate_increment: 1,
            interval_start: 0,
          },
          timestamp_auth: null,
          timestamp_begin: begin,
          timestamp_end: new Date(begin.getTime() + duration * 1000),
          inbound: false,
          failed: false,
          duration,
          fee: BigInt(duration),
          state: 'charged',
          call_parties: [tag],
        });
        entries.push({
          _id: `charge:${id}`,
          account_tag: tag,
          amount: -BigInt(duration),
          kind: 'charge',
          transaction_tag: `call-${i}`,
          ref: id,
          at: begin,
        });
        owed.set(tag, (owed.get(tag) ?? 0n) + BigInt(duration));
      }
      await ctx.mongo.collections.transactions.insertMany(records, { ordered: false });
      await ctx.mongo.collections.ledger.insertMany(entries, { ordered: false });
    }
    for (const [tag, amount] of owed) await ctx.mongo.collections.accounts.updateOne({ account_tag: tag }, { $set: { balance: -amount } });
    console.log(`wrote ${RECORDS} charged records over ${ACCOUNTS} accounts in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    // The price doubles.
    await ctx.mongo.collections.rates.updateMany({}, { $set: { rate: 120 } });
    await announceRatingDataChange(ctx);

    for (let i = 0; i < WORKERS; i++) {
      const child = spawn(process.execPath, [path.join(root, 'dist', 'workers', 'main.js')], {
        env: { ...env, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20000)));
      child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20000)));
      workers.push(child);
      await waitForOutput(child, 'worker ready', () => out);
    }
    const meter = new CpuMeter([
      ...workers.map((w, i) => ({ name: `worker${i + 1}`, pid: w.pid })),
      { name: 'mongo-wire server', pid: serverPid(services.mongoUrl) },
      { name: 'redis-server', pid: serverPid(services.redisUrl) },
    ]);
    t = Date.now();
    const cli = spawn(
      process.execPath,
      [
        path.join(root, 'dist', 'cli', 'rating.js'),
        'rerate',
        '--from',
        new Date(start - 1000).toISOString(),
        '--to',
        new Date().toISOString(),
        '--no-progress',
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    cli.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    cli.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => cli.once('exit', resolve));
    const seconds = (Date.now() - t) / 1000;
    const cpu = meter.read();
    if (code !== 0) throw new Error(`rating rerate exited ${code}: ${stderr}`);
    console.log(stdout.trim());
    console.log(
      `rerating: ${RECORDS} records in ${seconds.toFixed(1)} s = ${Math.round(RECORDS / seconds)} records/s ` +
        `(${WORKERS} workers, ${os.cpus().length} cores, ${cpu.byProcess.map((p) => `${p.name} ${p.seconds?.toFixed(1) ?? '?'} s CPU`).join(', ')})`,
    );
    const report = await auditLedger(ctx.mongo.collections);
    console.log(
      `audit: ${report.differences.length} differences, ${report.calls.length} call problems, ${report.ledger_entries} ledger entries`,
    );
    const sample = await ctx.mongo.collections.transactions.findOne({ transaction_tag: 'call-7' });
    console.log(
      `conditions: node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}, ${services.mongoUrl.startsWith('mongodb://127.0.0.1') ? 'local MongoDB-wire server' : 'MONGO_URL'}; sample record fee ${sample?.fee} (was ${sample?.duration})`,
    );
    if (report.differences.length > 0 || report.calls.length > 0) process.exitCode = 1;
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    await ctx.close();
    await services.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
