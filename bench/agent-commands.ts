/**
 * bench:agent-commands — the MongoDB commands one call costs, by phase (issue 12, issue 36):
 * authorization, begin, end and processing run in this process, exactly as a worker runs them, against
 * a client that counts every command (test/support/call-commands.ts, which the counting test
 * test/integration/ledger/call-commands.test.ts asserts on). Counts, not timings.
 *
 *   npm run bench:agent-commands -- [--parents 0|1] [--limit]
 */
import { loadConfig } from '../src/shared/infra/config';
import { createContext } from '../src/shared/domain/context';
import { createLogger } from '../src/shared/infra/logger';
import { startLocalServices } from '../src/shared/infra/services/local-services';
import { CALL_PHASES, commandTotal, countCallCommands } from '../test/support/call-commands';

const flag = (name: string) => process.argv.includes(`--${name}`);
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};

async function main(): Promise<void> {
  const parents = arg('parents', 0);
  const limited = flag('limit');
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
    const counts = await countCallCommands(ctx, services.mongoUrl, { parents, limited });
    const lines = [
      `MongoDB commands per call: 1 caller${parents ? ` + ${parents} parent(s)` : ''}${limited ? ', caller with a concurrency limit' : ''} (processing: one job per party)`,
    ];
    let total = 0;
    for (const p of CALL_PHASES) {
      const n = commandTotal(counts[p]);
      total += n;
      lines.push(`  ${p.padEnd(13)} ${String(n).padStart(2)}: ${[...counts[p]].map(([k, v]) => `${k} ${v}`).join(', ')}`);
    }
    lines.push(`commands: ${total} per call`);
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await ctx.mongo.db.dropDatabase().catch(() => undefined);
    await ctx.close();
    await services.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
  process.exit(1);
});
