/**
 * bench:agent-commands — the MongoDB commands one call costs, by phase (issue 12, issue 36):
 * authorization, begin, end and processing run in this process, exactly as a worker runs them, against
 * a client that counts every command (test/support/call-commands.ts, which the counting test
 * test/integration/ledger/call-commands.test.ts asserts on). Then the Redis round trips of one call
 * through the agent's REST mirror and a worker (both in this process, on the bench's own redis-server),
 * as redis-server counts them (test/support/redis-round-trips.ts, asserted by
 * test/integration/agent/call-redis-commands.test.ts). Counts, not timings.
 *
 *   npm run bench:agent-commands -- [--parents 0|1] [--limit] [--end-elsewhere]
 */
import { loadConfig } from '../src/shared/infra/config';
import { createContext } from '../src/shared/domain/context';
import { createLogger } from '../src/shared/infra/logger';
import { startLocalServices } from '../src/shared/infra/services/local-services';
import { CALL_PHASES, commandTotal, countCallCommands } from '../test/support/call-commands';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../src/shared/infra/config';
import type { Endpoints } from '../src/shared/infra/service-context';
import { createRedis } from '../src/shared/infra/redis';
import { buildAgent } from '../src/agent/app';
import { startWorkers, type WorkerPool } from '../src/workers/worker-pool';
import { RedisRoundTrips } from '../test/support/redis-round-trips';
import { account, perSecondRating, seed } from '../test/support/seed';

const flag = (name: string) => process.argv.includes(`--${name}`);
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};

async function main(): Promise<void> {
  const parents = arg('parents', 0);
  const limited = flag('limit');
  // The end in another worker process than the begin (a deployment with several): it remembers nothing of the call.
  const endElsewhere = flag('end-elsewhere');
  const services = await startLocalServices(
    { mongoUrl: process.env.MONGO_URL || undefined, redisUrl: process.env.REDIS_URL || undefined, dataDir: '' },
    { ephemeral: true },
  );
  const config = loadConfig({
    MONGO_URL: services.mongoUrl,
    REDIS_URL: services.redisUrl,
    MONGO_DB: 'bench_commands',
    QUEUE_PREFIX: 'benchcommands',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'test',
  });
  const ctx = await createContext(config, services, createLogger(config, 'bench'));
  try {
    await ctx.mongo.db.dropDatabase();
    const counts = await countCallCommands(ctx, services.mongoUrl, { parents, limited, endElsewhere });
    const lines = [
      `MongoDB commands per call: 1 caller${parents ? ` + ${parents} parent(s)` : ''}${limited ? ', caller with a concurrency limit' : ''}${endElsewhere ? ', ended in another worker process' : ''} (processing: what follows the end's answer in its job, and the entries it left to charge)`,
    ];
    let total = 0;
    for (const p of CALL_PHASES) {
      const n = commandTotal(counts[p]);
      total += n;
      lines.push(`  ${p.padEnd(13)} ${String(n).padStart(2)}: ${[...counts[p]].map(([k, v]) => `${k} ${v}`).join(', ')}`);
    }
    lines.push(`commands: ${total} per call`);
    process.stdout.write(`${lines.join('\n')}\n`);
    if (process.env.REDIS_URL) process.stdout.write('Redis round trips: n/a (REDIS_URL set: other clients would be counted)\n');
    else
      process.stdout.write(
        `Redis round trips per call (single-party prepaid, one call at a time): ${await countRoundTrips(config, services)}\n`,
      );
  } finally {
    await ctx.mongo.db.dropDatabase().catch(() => undefined);
    await ctx.close();
    await services.stop();
  }
}

/** The least of three calls' Redis round trips through the agent and a worker, each run in this process. */
async function countRoundTrips(base: Config, services: Endpoints): Promise<string> {
  const config = { ...base, mongoDb: 'bench_round_trips', queuePrefix: 'benchtrips', jobLockMs: 60_000 };
  const ctx = await createContext(config, services, createLogger(config, 'bench'));
  const probe = createRedis(services.redisUrl!);
  let workers: WorkerPool | undefined;
  let agent: FastifyInstance | undefined;
  try {
    await ctx.mongo.db.dropDatabase();
    await seed(ctx, { ...perSecondRating(), accounts: [account('solo', { balance: 1_000_000n })] });
    workers = await startWorkers(ctx);
    agent = await buildAgent(ctx);
    const url = await agent.listen({ host: '127.0.0.1', port: 0 });
    const post = async (path: string, body: Record<string, unknown>) => {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as { ok?: boolean; authorized?: boolean };
      if (!(answer.ok ?? answer.authorized)) throw new Error(`${path}: ${JSON.stringify(answer)}`);
    };
    const trips = new RedisRoundTrips(probe);
    await trips.settle();
    const oneCall = (tag: string) =>
      trips.count(
        async () => {
          const call = { transaction_tag: tag, account_tag: 'solo', source: '100', destination: '391234' };
          await post('/v1/authorization', call);
          await post('/v1/begin_transaction', { ...call, timestamp_begin: '2026-11-21T10:00:00Z' });
          await post('/v1/end_transaction', { transaction_tag: tag, account_tag: 'solo', timestamp_end: '2026-11-21T10:00:30Z' });
        },
        async () => (await ctx.mongo.collections.accounts.findOne({ account_tag: 'solo' }))!.running_transactions.length === 0,
      );
    await oneCall('warm-up'); // loads scripts into Redis: not what a call costs
    const counted = [await oneCall('r1'), await oneCall('r2'), await oneCall('r3')];
    return `${Math.min(...counted)} (calls: ${counted.join(', ')}; authorization, begin, end and the charge; the least of three)`;
  } finally {
    await agent?.close();
    await workers?.close();
    probe.disconnect();
    await ctx.mongo.db.dropDatabase().catch(() => undefined);
    await ctx.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
  process.exit(1);
});
