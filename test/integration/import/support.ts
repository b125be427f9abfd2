import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ImportLine } from '../../../src/shared/domain/queues/payloads';
import type { TestContext } from '../../support/harness';
import { redisEnv } from '../../support/processes';
import { account, carrier, pricelist, rate, seed } from '../../support/seed';

const root = path.resolve(__dirname, '..', '..', '..');

/**
 * Rating data where a call's fee is its duration in seconds (rate 60 per minute, 1 s increment), so
 * expected balances are plain sums. Accounts a0..a{n-1} start at 1,000,000.
 */
export async function seedImportData(ctx: TestContext, accountCount: number): Promise<void> {
  await seed(ctx, {
    carriers: [carrier('c1', { host: '10.0.0.1', port: 5060 })],
    pricelists: [pricelist('pl')],
    rates: [rate('pl', 'c1', '49', { rate: 60, rate_increment: 1, connect_fee: 0 })],
    accounts: Array.from({ length: accountCount }, (_, i) => account(`a${i}`, { balance: 1_000_000n })),
  });
}

/** Line `n` of a batch: a call of `accountTag` to 4930222 that lasted `seconds`, begun 2026-01-01 12:00 UTC. */
export function importLine(n: number, tag: string, accountTag: string, seconds: number): ImportLine {
  return {
    line: n,
    transaction_tag: tag,
    account_tag: accountTag,
    source: '1',
    destination: '4930222',
    source_ip: null,
    carrier_ip: null,
    tags: null,
    destination_account_tag: null,
    timestamp_auth: null,
    timestamp_begin: '2026-01-01T12:00:00.000Z',
    timestamp_end: new Date(Date.UTC(2026, 0, 1, 12, 0, 0) + seconds * 1000).toISOString(),
  };
}

export interface Call {
  tag: string;
  account: string;
  seconds: number;
  destination?: string;
}

export function csvOf(calls: Call[], extraLines: string[] = []): string {
  const rows = calls.map((c) => {
    const end = new Date(Date.UTC(2026, 0, 1, 12, 0, 0) + c.seconds * 1000).toISOString().replace('.000Z', 'Z');
    return `${c.tag},${c.account},4930111,${c.destination ?? '4930222'},2026-01-01T12:00:00Z,${end}`;
  });
  return ['transaction_tag,account_tag,source,destination,timestamp_begin,timestamp_end', ...rows, ...extraLines].join('\n') + '\n';
}

export function tempFile(name: string, content: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rating-import-'));
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

export interface CliRun {
  child: ChildProcess;
  output(): string;
  done: Promise<number | null>;
}

/** The built CLI (`node dist/cli/rating.js import ...`) on the test's database and queue prefix. */
export function runCli(ctx: TestContext, args: string[]): CliRun {
  const child = spawn(process.execPath, [path.join(root, 'dist', 'cli', 'rating.js'), 'import', ...args], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      MONGO_URL: process.env.MONGO_URL,
      ...redisEnv(ctx.config),
      MONGO_DB: ctx.config.mongoDb,
      QUEUE_PREFIX: ctx.config.queuePrefix,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const done = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, done };
}

export async function importFile(ctx: TestContext, args: string[]): Promise<{ code: number | null; output: string }> {
  const run = runCli(ctx, args);
  const code = await run.done;
  return { code, output: run.output() };
}

/** `name: value` rows of the CLI summary. */
export function summaryOf(output: string): Record<string, string> {
  const rows: Record<string, string> = {};
  for (const line of output.split('\n')) {
    const m = /^([a-z ]+):\s+(.*)$/.exec(line);
    if (m) rows[m[1]] = m[2];
  }
  return rows;
}

export async function balances(ctx: TestContext): Promise<Map<string, bigint>> {
  const docs = await ctx.mongo.collections.accounts.find({}, { projection: { account_tag: 1, balance: 1 } }).toArray();
  return new Map(docs.map((d) => [d.account_tag, d.balance]));
}
