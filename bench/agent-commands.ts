/**
 * bench:agent-commands — the MongoDB commands one call costs, by phase (issue 12): authorization,
 * begin, end and processing run in this process, exactly as a worker runs them, against a client that
 * counts every command. Counts, not timings: every command is a round trip, a socket write on both
 * sides and a document copy in the MongoDB-wire server, the largest cost per call (docs/BENCHMARKS.md).
 *
 *   npm run bench:agent-commands -- [--parents 0|1] [--limit]
 */
import type { CommandStartedEvent } from 'mongodb';
import { loadConfig } from '../src/shared/infra/config';
import { createContext } from '../src/shared/domain/context';
import { createLogger } from '../src/shared/infra/logger';
import { connectMongo } from '../src/shared/domain/store';
import { announceRatingDataChange, RatingDataCache } from '../src/shared/domain/rating-data/cache';
import { startLocalServices } from '../src/shared/infra/services/local-services';
import { authorize } from '../src/workers/transactions/authorization';
import { begin } from '../src/workers/transactions/begin';
import { end } from '../src/workers/transactions/end';
import { processEndedCall } from '../src/workers/transactions/processing';
import { account, carrier, pricelist, rate } from '../test/support/seed';

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
  const counted = await connectMongo(services.mongoUrl, config.mongoDb, { monitorCommands: true });
  let phase = 'setup';
  const counts = new Map<string, Map<string, number>>();
  counted.client.on('commandStarted', (e: CommandStartedEvent) => {
    const collection = (e.command[e.commandName] as unknown as string) ?? '';
    const key = `${e.commandName} ${typeof collection === 'string' ? collection : ''}`.trim();
    const byPhase = counts.get(phase) ?? new Map<string, number>();
    counts.set(phase, byPhase);
    byPhase.set(key, (byPhase.get(key) ?? 0) + 1);
  });
  try {
    await ctx.mongo.db.dropDatabase();
    const c = ctx.mongo.collections;
    await c.carriers.insertOne(carrier('c1'));
    await c.pricelists.insertOne(pricelist('pl'));
    await c.rates.insertOne(rate('pl', 'c1', '39'));
    const parentTags = Array.from({ length: parents }, (_, i) => `parent${i}`);
    await c.accounts.insertMany([
      ...parentTags.map((tag) => account(tag, { balance: 1_000_000n })),
      account('caller', { balance: 1_000_000n, linked_accounts: parentTags, max_concurrent_transactions: limited ? 10 : null }),
    ]);
    await announceRatingDataChange(ctx);
    const rating = await RatingDataCache.start(ctx);
    const deps = { ctx: { ...ctx, mongo: counted }, rating };
    const deadline = () => Date.now() + 5000;
    const call = { transaction_tag: 'call-1', account_tag: 'caller' };
    phase = 'authorization';
    await authorize(deps, {
      op: 'authorization',
      ...call,
      destination_account_tag: null,
      source: '100',
      destination: '393299',
      deadline: deadline(),
    });
    phase = 'begin';
    const started = await begin(
      deps,
      {
        op: 'begin',
        ...call,
        source: '100',
        destination: '393299',
        source_ip: null,
        carrier_ip: null,
        tags: null,
        destination_account_tag: null,
        timestamp_auth: null,
        timestamp_begin: new Date().toISOString(),
        deadline: deadline(),
      },
      { id: 'job-begin', deadline: deadline(), rerun: false },
    );
    phase = 'end';
    const ended = await end(
      deps,
      { op: 'end', ...call, timestamp_end: new Date(Date.now() + 30_000).toISOString(), deadline: deadline() },
      { id: 'job-end', deadline: deadline(), rerun: false },
    );
    if (!started.ok || !ended.ok) throw new Error(`call refused: begin ${started.reason}, end ${ended.reason}`);
    for (const tag of ['caller', ...parentTags]) {
      const entry = (await c.accounts.findOne({ account_tag: tag }))!.running_transactions[0];
      phase = 'processing';
      await processEndedCall(deps, {
        account_tag: tag,
        transaction_tag: call.transaction_tag,
        entry_id: entry.id,
        enqueued_at: new Date().toISOString(),
      });
      phase = 'setup';
    }
    await rating.close();
    const lines = [
      `MongoDB commands per call: 1 caller${parents ? ` + ${parents} parent(s)` : ''}${limited ? ', caller with a concurrency limit' : ''} (processing: one job per party)`,
    ];
    let total = 0;
    for (const p of ['authorization', 'begin', 'end', 'processing']) {
      const byPhase = counts.get(p) ?? new Map<string, number>();
      const n = [...byPhase.values()].reduce((a, b) => a + b, 0);
      total += n;
      lines.push(`  ${p.padEnd(13)} ${String(n).padStart(2)}: ${[...byPhase].map(([k, v]) => `${k} ${v}`).join(', ')}`);
    }
    lines.push(`commands: ${total} per call`);
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await counted.close();
    await ctx.mongo.db.dropDatabase().catch(() => undefined);
    await ctx.close();
    await services.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
  process.exit(1);
});
