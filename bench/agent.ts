/**
 * bench:agent — begin+end pairs through the agent's REST mirror at a fixed concurrency, with real
 * worker processes behind it. Prints call setups per second and begin latency percentiles.
 *
 *   npm run bench:agent -- [--pairs 5000] [--concurrency 32] [--workers 2] [--accounts 100]
 */
import { ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { buildAgent } from '../src/agent/app';
import { loadConfig } from '../src/shared/config';
import { createContext } from '../src/shared/context';
import { createLogger } from '../src/shared/logger';
import { announceRatingDataChange } from '../src/shared/rating-data/cache';
import { startLocalServices } from '../src/shared/services/local-services';
import { account, carrier, pricelist, rate } from '../test/support/seed';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main() {
  const pairs = arg('pairs', 5000);
  const concurrency = arg('concurrency', 32);
  const workerCount = arg('workers', 2);
  const accountCount = arg('accounts', 100);
  const services = await startLocalServices(
    { mongoUrl: process.env.MONGO_URL || undefined, redisUrl: process.env.REDIS_URL || undefined, dataDir: '' },
    { ephemeral: true },
  );
  const env = { MONGO_URL: services.mongoUrl, REDIS_URL: services.redisUrl, MONGO_DB: 'bench_agent', QUEUE_PREFIX: 'benchagent', LOG_LEVEL: 'warn', NODE_ENV: 'test', AGENT_PORT: '0', METRICS_PORT: '0' };
  const config = loadConfig(env);
  const ctx = await createContext(config, services, createLogger(config, 'bench'));
  const workers: ChildProcess[] = [];
  try {
    await ctx.mongo.db.dropDatabase();
    await ctx.mongo.collections.carriers.insertMany([carrier('c1'), carrier('c2')]);
    await ctx.mongo.collections.pricelists.insertOne(pricelist('pl'));
    await ctx.mongo.collections.rates.insertMany([rate('pl', 'c1', '39'), rate('pl', 'c2', '39', { rate: 25 }), rate('pl', 'c1', '3932')]);
    await ctx.mongo.collections.accounts.insertMany(
      Array.from({ length: accountCount }, (_, i) => account(`acc${i}`, { balance: 10_000_000_000n })),
    );
    await announceRatingDataChange(ctx);
    for (let i = 0; i < workerCount; i++) {
      const child = spawn(process.execPath, [path.resolve(__dirname, '..', 'dist', 'workers', 'main.js')], {
        env: { ...process.env, ...env, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve) => child.stdout!.on('data', (d: Buffer) => d.toString().includes('worker ready') && resolve()));
      child.stdout!.resume();
      workers.push(child);
    }
    const app = await buildAgent(ctx);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const post = async (op: string, body: unknown) => {
      const started = performance.now();
      const response = await fetch(`${url}/v1/${op}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const result = (await response.json()) as { ok: boolean; reason: string | null };
      if (!result.ok) throw new Error(`${op} refused: ${result.reason}`);
      return performance.now() - started;
    };

    const beginLatency: number[] = [];
    const endLatency: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < pairs; i = next++) {
          const call = { transaction_tag: `b${i}`, account_tag: `acc${i % accountCount}` };
          beginLatency.push(await post('begin_transaction', { ...call, source: '100', destination: '393212345' }));
          endLatency.push(await post('end_transaction', call));
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    await app.close();
    const sortedBegin = beginLatency.sort((a, b) => a - b);
    const sortedEnd = endLatency.sort((a, b) => a - b);
    const setups = pairs / seconds;
    const mongoKind = process.env.MONGO_URL ? 'external MongoDB' : 'local MongoDB-wire server (mongo-java-server, memory) or mongod';
    console.log(`conditions: ${pairs} begin+end pairs, concurrency ${concurrency}, ${workerCount} worker processes x ${config.workerConcurrency} jobs, ${accountCount} accounts, ${mongoKind}, redis-server, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), node ${process.version}`);
    console.log(`end latency: p50 ${percentile(sortedEnd, 50).toFixed(1)} ms; p99 ${percentile(sortedEnd, 99).toFixed(1)} ms`);
    console.log(`agent: ${setups.toFixed(0)} call setups/s; p50 ${percentile(sortedBegin, 50).toFixed(1)} ms; p99 ${percentile(sortedBegin, 99).toFixed(1)} ms`);
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(workers.map((w) => new Promise((r) => (w.exitCode !== null ? r(null) : w.once('exit', r)))));
    await ctx.mongo.db.dropDatabase().catch(() => undefined);
    await ctx.close();
    await services.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
