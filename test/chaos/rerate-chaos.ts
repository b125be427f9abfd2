/**
 * Rerating under chaos (issue 34): a rerating run over 50,000 charged records (100,000 with --records) (docs/RERATING.md) while
 * worker processes and redis-server are SIGKILLed and restarted on a seeded schedule, and a few hundred
 * of the records are rolled back through the agent's REST mirror as the run reaches them. When the run
 * is done and the workers are quiet, every record, balance and ledger entry is checked against what the
 * price change must have done: each record's fee is its new rating and it was corrected once, each
 * account moved by exactly the sum of its differences (a rolled-back record nets zero), the ledger holds
 * one correction per record, the audit finds nothing. See test/chaos/README.md.
 *
 *   npm run test:rerate-chaos -- [--records 50000] [--accounts 1000] [--seconds 420] [--seed N] [--keep]
 *
 * Exit status: 0 no violation, 1 violations found, 2 the run could not be carried out, 130 interrupted.
 */
import { spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { AccountDoc, TransactionDoc } from '../../src/shared/domain/types';
import { auditLedger, type AuditReport } from '../../src/shared/domain/ledger/audit';
import { opIds, type LedgerEntryDoc } from '../../src/shared/domain/ledger';
import { computeFee } from '../../src/shared/domain/rating';
import type { ReratingDoc } from '../../src/shared/domain/rerating';
import { connectMongo, ensureIndexes, ROLLBACK_OUTCOMES, type Mongo } from '../../src/shared/domain/store';
import { createQueues, type Queues } from '../../src/shared/domain/queues/queues';
import { takeoverMs } from '../../src/workers/maintenance/recover';
import { withParentDeathSignal } from '../../src/shared/infra/services/process-tools';
import { account, carrier, pricelist, rate } from '../support/seed';
import { between, type Rng, seededRng } from '../support/rng';
import {
  bump,
  defineServers,
  errorText,
  faultLoop,
  HOST,
  httpReady,
  killRedis,
  Proc,
  type ProcHost,
  seconds,
  sleep,
  total,
  withTimeout,
} from './services';

const ROOT = path.resolve(__dirname, '..', '..');
const MONGO_DB = 'rerate_chaos';
const QUEUE_PREFIX = 'rerate';

// Settings of the agent and workers: short, so that lost work is taken over within the run.
const AGENT_TIMEOUT_MS = 3000;
const AGENT_ABANDON_MS = 1500;
/** A killed worker's job is delivered again after this long. */
const JOB_LOCK_MS = 2000;
/** The recovery sweep (src/workers/maintenance/recover.ts) runs this often ... */
const LONG_CALL_SCAN_SECONDS = 2;
/** ... and queues a run's next batch again once its document has not moved for this long (takeoverAfterMs). */
const TAKEOVER_MS = takeoverMs(JOB_LOCK_MS);
/** A rollback request without an answer by then has an unknown outcome (the agent's bound plus 2 s). */
const CLIENT_TIMEOUT_MS = AGENT_TIMEOUT_MS + AGENT_ABANDON_MS + 2000;
/** Rough speed of a run under these faults on a 2-core machine: paces the rollbacks until the run's own speed is known. */
const EXPECTED_RECORDS_PER_SECOND = 280;

// ============================================================================ options

interface Options {
  records: number;
  accounts: number;
  /** Ceiling of the fault phase: faults stop when the run is done, or after this many seconds. */
  seconds: number;
  /** Bound on the run finishing and the workers settling once the faults stopped. */
  drainSeconds: number;
  workers: number;
  /** Rollbacks sent during the run (0: none). */
  rollbacks: number;
  seed: number;
  keep: boolean;
}

const USAGE = `usage: npm run test:rerate-chaos -- [options]
  --records N         charged records to seed (default 50000; 100000 takes 6 to 8 min on 2 cores)
  --accounts N        accounts they belong to, about 1 in 50 a parent (default 1000)
  --seconds N         ceiling of the fault phase; faults stop earlier when the run is done (default 420)
  --drain-seconds N   bound on the run finishing and the workers settling after the faults (default 240)
  --workers N         worker processes (default 2)
  --rollbacks N       calls rolled back during the run (default 300, fewer for small runs)
  --seed N            seed of the data and of the faults' schedule (default: random, printed)
  --keep              keep the temporary directory with the process logs
`;

class UsageError extends Error {}

function parseOptions(argv: string[]): Options {
  const options: Options = {
    records: 50_000,
    accounts: 1000,
    seconds: 420,
    drainSeconds: 240,
    workers: 2,
    rollbacks: -1,
    seed: Math.floor(Math.random() * 1_000_000),
    keep: false,
  };
  const args = argv.flatMap((a) =>
    a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a],
  );
  for (let i = 0; i < args.length; i++) {
    const name = args[i];
    const int = (min: number, max: number): number => {
      const raw = args[++i];
      if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
        throw new UsageError(`${name} needs an integer from ${min} to ${max}`);
      }
      return Number(raw);
    };
    switch (name) {
      case '--records':
        options.records = int(100, 2_000_000);
        break;
      case '--accounts':
        options.accounts = int(2, 100_000);
        break;
      case '--seconds':
        options.seconds = int(10, 7200);
        break;
      case '--drain-seconds':
        options.drainSeconds = int(10, 7200);
        break;
      case '--workers':
        options.workers = int(1, 8);
        break;
      case '--rollbacks':
        options.rollbacks = int(0, 100_000);
        break;
      case '--seed':
        options.seed = int(0, 2 ** 31);
        break;
      case '--keep':
        options.keep = true;
        break;
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        process.exit(0);
        break;
      default:
        throw new UsageError(`unknown option ${name}`);
    }
  }
  // A few hundred by default; about 1 call in 130 for smaller runs.
  if (options.rollbacks < 0) options.rollbacks = Math.min(300, Math.max(10, Math.round(options.records / 130)));
  return options;
}

// ============================================================================ the run's shared state

class Run implements ProcHost {
  readonly startedAt = Date.now();
  readonly tmp = mkdtempSync(path.join(os.tmpdir(), 'rating-rerate-chaos-'));
  closing = false;
  interrupted = false;
  /** Aborted when the faults stop (the run is done, or the ceiling). */
  readonly stopFaults = new AbortController();
  phaseStart = 0;
  phase = 'setup';
  readonly faults = new Map<string, number>();
  readonly notes: string[] = [];
  readonly violations: Array<{ check: string; text: string }> = [];
  readonly procs: Proc[] = [];
  mongo: Mongo | undefined;
  redis: Redis | undefined;
  queues: Queues | undefined;
  private cleaned: Promise<void> | undefined;

  constructor(readonly options: Options) {
    setMaxListeners(0, this.stopFaults.signal);
  }

  violation(check: string, text: string): void {
    this.violations.push({ check, text });
  }

  note(text: string): void {
    this.notes.push(`[${seconds(Date.now() - this.startedAt)}] ${text}`);
  }

  elapsed(): string {
    return `${String(Math.round((Date.now() - this.startedAt) / 1000)).padStart(4)}s`;
  }

  down(): string {
    const down = this.procs.filter((p) => p.state !== 'up').map((p) => `${p.name}(${p.state})`);
    return down.length ? ` | down: ${down.join(' ')}` : '';
  }

  cleanup(): Promise<void> {
    this.cleaned ??= (async () => {
      this.closing = true;
      this.stopFaults.abort();
      await Promise.allSettled(this.procs.map((p) => p.destroy()));
      await Promise.allSettled([
        this.queues ? withTimeout(this.queues.close(), 5000, 'closing queues') : Promise.resolve(),
        this.mongo ? withTimeout(this.mongo.close(), 5000, 'closing MongoDB client') : Promise.resolve(),
      ]);
      this.redis?.disconnect();
      await Promise.allSettled(this.procs.map((p) => p.closeLog()));
      if (this.options.keep) process.stdout.write(`kept ${this.tmp} (process logs under logs/)\n`);
      else rmSync(this.tmp, { recursive: true, force: true });
    })();
    return this.cleaned;
  }
}

// ============================================================================ processes

interface Services {
  redis: Proc;
  mongo: Proc;
  agent: Proc;
  workers: Proc[];
  redisUrl: string;
  mongoUrl: string;
  redisDir: string;
  agentUrl: string;
  env: NodeJS.ProcessEnv;
}

async function defineServices(run: Run): Promise<Services> {
  for (const file of ['agent', 'workers', 'cli'].map((d) => path.join(ROOT, 'dist', d, d === 'cli' ? 'rating.js' : 'main.js'))) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first (npm run test:rerate-chaos does)`);
  }
  const { redis, mongo, redisUrl, mongoUrl, redisDir, ports } = await defineServers(run, 1 + run.options.workers, {
    // MongoDB is not restarted here (test:chaos does that): its memory backend keeps the run's speed.
    mongoBackend: 'memory',
  });
  const [agentPort, ...workerPorts] = ports;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    HOST,
    MONGO_URL: mongoUrl,
    REDIS_URL: redisUrl,
    MONGO_DB,
    QUEUE_PREFIX,
    JOB_LOCK_MS: String(JOB_LOCK_MS),
    LONG_CALL_SCAN_SECONDS: String(LONG_CALL_SCAN_SECONDS),
    AGENT_TIMEOUT_MS: String(AGENT_TIMEOUT_MS),
    AGENT_ABANDON_MS: String(AGENT_ABANDON_MS),
    // The workers' own hourly audit would read 100,000 records in the middle of the run: the harness audits.
    AUDIT_INTERVAL_SECONDS: '0',
    RATE_LIMIT_MAX: '0',
    RATING_TOKENS: '',
  };
  const agent = new Proc(run, {
    name: 'agent',
    command: () => withParentDeathSignal(process.execPath, [path.join(ROOT, 'dist', 'agent', 'main.js')]),
    env: { ...env, AGENT_PORT: String(agentPort) },
    ready: () => httpReady(agentPort),
    readyTimeoutMs: 60000,
    pino: true,
  });
  const workers = workerPorts.map(
    (port, i) =>
      new Proc(run, {
        name: `worker${i + 1}`,
        command: () => withParentDeathSignal(process.execPath, [path.join(ROOT, 'dist', 'workers', 'main.js')]),
        env: { ...env, METRICS_PORT: String(port) },
        ready: () => httpReady(port),
        readyTimeoutMs: 60000,
        pino: true,
      }),
  );
  return { redis, mongo, agent, workers, redisUrl, mongoUrl, redisDir, agentUrl: `http://${HOST}:${agentPort}`, env };
}

// ============================================================================ data

/**
 * Prices: 60 per minute in 1 s steps on '39' (callers: no connect fee; parents: 2), raised to 90 per
 * minute by the price change, so a changed fee is connect + ceil(1.5 x seconds); '44' keeps its price
 * (those records are rated again unchanged).
 */
const PRICELISTS = { callers: 'pl', parents: 'plp' } as const;
const CONNECT = { pl: 0, plp: 2 } as const;
const OLD_RATE = 60;
const NEW_RATE = 90;
const CHANGED_PREFIX = '39';
const KEPT_PREFIX = '44';

const termsOf = (pricelistTag: 'pl' | 'plp', perMinute: number) => ({
  connect_fee: CONNECT[pricelistTag],
  rate: perMinute,
  rate_increment: 1,
  interval_start: 0,
});

/** One seeded record and what the run must make of it. */
interface Expected {
  id: string;
  account: string;
  caller: string;
  tag: string;
  oldFee: bigint;
  /** Its fee after the run: the new rating when selected and on the changed prefix, else the old fee. */
  newFee: bigint;
  /** In the run's time window. */
  selected: boolean;
}

interface Seeded {
  records: Expected[];
  byId: Map<string, Expected>;
  /** Calls (caller, tag) with their records (the caller's and its parent's share). */
  calls: Map<string, Expected[]>;
  /** Balances after seeding, before the run. */
  before: Map<string, bigint>;
  accounts: string[];
  from: Date;
  to: Date;
  selected: number;
  toChange: number;
}

const callKey = (caller: string, tag: string) => `${caller}\u0000${tag}`;

/** A UUID-shaped id from the seeded generator: the run's batches (by `_id`) are the same for a seed. */
function seededId(rng: Rng): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rng() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

/**
 * Accounts (1 in 50 a parent; every 10th caller linked to one; a third of the callers postpaid, the
 * others prepaid with a random credit, some of which a price rise takes below zero) and the records of
 * their calls, with their charges in the ledger and the balances to match, written straight to MongoDB
 * as processing leaves them (as bench/rerate.ts does). 1 % of the calls started before the run's window
 * (not selected: must be left alone); 10 % went to '44' (rated again unchanged).
 */
async function seedData(mongo: Mongo, options: Options): Promise<Seeded> {
  const rng = seededRng(options.seed * 13 + 5);
  const c = mongo.collections;
  const parentCount = Math.max(1, Math.round(options.accounts / 50));
  const parents = Array.from({ length: parentCount }, (_, i) => `par${i}`);
  const callers = Array.from({ length: Math.max(1, options.accounts - parentCount) }, (_, i) => `acct${i}`);
  const parentOf = new Map(callers.flatMap((tag, i) => (i % 10 === 0 ? [[tag, parents[(i / 10) % parentCount]] as const] : [])));
  await c.carriers.insertOne(carrier('c1'));
  await c.pricelists.insertMany([pricelist(PRICELISTS.callers), pricelist(PRICELISTS.parents)]);
  await c.rates.insertMany(
    (['pl', 'plp'] as const).flatMap((pl) => [CHANGED_PREFIX, KEPT_PREFIX].map((prefix) => rate(pl, 'c1', prefix, termsOf(pl, OLD_RATE)))),
  );
  const opening = new Map<string, bigint>();
  const docs: AccountDoc[] = [];
  for (const [i, tag] of callers.entries()) {
    const prepaid = i % 3 !== 0;
    const balance = prepaid ? BigInt(between(rng, 0, 400_000)) : 0n;
    opening.set(tag, balance);
    docs.push(
      account(tag, {
        type: prepaid ? 'PREPAID' : 'POSTPAID',
        balance,
        pricelist_tags: [PRICELISTS.callers],
        linked_accounts: parentOf.has(tag) ? [parentOf.get(tag)!] : [],
      }),
    );
  }
  for (const [i, tag] of parents.entries()) {
    const prepaid = i % 2 === 0;
    const balance = prepaid ? 5_000_000n : 0n;
    opening.set(tag, balance);
    docs.push(account(tag, { type: prepaid ? 'PREPAID' : 'POSTPAID', balance, pricelist_tags: [PRICELISTS.parents] }));
  }
  await c.accounts.insertMany(docs);

  // The window: the last two days; the calls outside it started the hour before.
  const from = new Date(Date.now() - 2 * 86_400_000);
  const to = new Date(Date.now() - 60_000);
  const span = to.getTime() - from.getTime() - 3_600_000;
  const seeded: Seeded = {
    records: [],
    byId: new Map(),
    calls: new Map(),
    before: new Map(),
    accounts: [...opening.keys()],
    from,
    to,
    selected: 0,
    toChange: 0,
  };
  const owed = new Map<string, bigint>();
  let records: TransactionDoc[] = [];
  let entries: LedgerEntryDoc[] = [];
  const flush = async () => {
    if (records.length === 0) return;
    await c.transactions.insertMany(records, { ordered: false });
    await c.ledger.insertMany(entries, { ordered: false });
    records = [];
    entries = [];
  };
  for (let call = 0; seeded.records.length < options.records; call++) {
    const caller = callers[Math.floor(rng() * callers.length)];
    const parent = parentOf.get(caller);
    const tag = `call-${call}`;
    const duration = between(rng, 1, 600);
    const selected = rng() >= 0.01;
    const prefix = rng() < 0.1 ? KEPT_PREFIX : CHANGED_PREFIX;
    const begin = new Date(
      selected ? from.getTime() + Math.floor(rng() * span) : from.getTime() - 3_600_000 + Math.floor(rng() * 3_500_000),
    );
    const destination = `${prefix}${String(between(rng, 0, 99_999_999)).padStart(8, '0')}`;
    const parties = parent ? [caller, parent] : [caller];
    const shares: Expected[] = [];
    for (const party of parties) {
      if (seeded.records.length >= options.records) break;
      const pl = party === caller ? PRICELISTS.callers : PRICELISTS.parents;
      const oldFee = computeFee(termsOf(pl, OLD_RATE), duration);
      const changes = selected && prefix === CHANGED_PREFIX;
      const newFee = changes ? computeFee(termsOf(pl, NEW_RATE), duration) : oldFee;
      const id = seededId(rng);
      const expected: Expected = { id, account: party, caller, tag, oldFee, newFee, selected };
      seeded.records.push(expected);
      seeded.byId.set(id, expected);
      shares.push(expected);
      if (selected) seeded.selected += 1;
      if (newFee !== oldFee) seeded.toChange += 1;
      records.push({
        _id: id,
        transaction_tag: tag,
        account_tag: party,
        origin_account_tag: caller,
        source: '100',
        source_ip: null,
        destination,
        carrier_ip: 'c1.example.net:5060',
        tags: null,
        authorized: true,
        unauthorized_reason: null,
        destination_rate: { pricelist_tag: pl, carrier_tag: 'c1', prefix, ...termsOf(pl, OLD_RATE) },
        timestamp_auth: null,
        timestamp_begin: begin,
        timestamp_end: new Date(begin.getTime() + duration * 1000),
        inbound: false,
        failed: false,
        duration,
        fee: oldFee,
        state: 'charged',
        call_parties: parties,
      });
      entries.push({
        _id: opIds.charge(id),
        account_tag: party,
        amount: -oldFee,
        kind: 'charge',
        transaction_tag: tag,
        ref: id,
        at: begin,
      });
      owed.set(party, (owed.get(party) ?? 0n) + oldFee);
    }
    seeded.calls.set(callKey(caller, tag), shares);
    if (records.length >= 5000) await flush();
  }
  await flush();
  for (const tag of seeded.accounts) {
    const balance = opening.get(tag)! - (owed.get(tag) ?? 0n);
    await c.accounts.updateOne({ account_tag: tag }, { $set: { balance } });
    seeded.before.set(tag, balance);
  }
  // What the accounts hold now is the truth the run starts from.
  for (const a of await c.accounts.find({}, { projection: { account_tag: 1, balance: 1 } }).toArray()) {
    if (seeded.before.get(a.account_tag) !== a.balance)
      throw new Error(`seeding: ${a.account_tag} holds ${a.balance}, not its seeded balance`);
  }
  return seeded;
}

/** The price change: 60 to 90 per minute on '39', for callers and parents; '44' keeps its price. */
async function raisePrices(mongo: Mongo): Promise<void> {
  const changed = await mongo.collections.rates.updateMany({ prefix: CHANGED_PREFIX }, { $set: { rate: NEW_RATE } });
  if (changed.modifiedCount !== 2) throw new Error(`price change: ${changed.modifiedCount} rates changed, not 2`);
}

// ============================================================================ the run

/** Starts the run with the CLI (`rating rerate --no-wait`); returns its id and the count the CLI selected. */
async function startRun(run: Run, s: Services, seeded: Seeded): Promise<{ id: string; total: number }> {
  const cli = spawn(
    process.execPath,
    [
      path.join(ROOT, 'dist', 'cli', 'rating.js'),
      'rerate',
      '--from',
      seeded.from.toISOString(),
      '--to',
      seeded.to.toISOString(),
      '--no-wait',
      '--no-progress',
    ],
    { env: s.env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  cli.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  cli.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await withTimeout(new Promise<number | null>((resolve) => cli.once('exit', resolve)), 60_000, 'rating rerate --no-wait');
  const id = /rerating (\S+) running/.exec(stdout)?.[1];
  const started = /started over (\d+) records/.exec(stderr)?.[1];
  if (code !== 0 || !id || !started) throw new Error(`rating rerate exited ${code}: ${stdout}${stderr}`);
  run.note(`rating rerate: ${stdout.trim()}`);
  return { id, total: Number(started) };
}

// ============================================================================ rollbacks

/** ok; NOT_FOUND after an unknown outcome (that attempt did it); NOT_FOUND at once; no final answer; not answered yet. */
type RollbackFate = 'ok' | 'inferred' | 'not-found' | 'unknown' | 'pending';

interface Rollback {
  caller: string;
  tag: string;
  /** How it was picked: at the run's cursor (the batch under way or next), or anywhere. */
  how: 'front' | 'random';
  answers: string[];
  fate: RollbackFate;
}

const TRANSIENT = new Set(['TIMEOUT', 'UNAVAILABLE', 'BUSY']);

/**
 * One rollback through the agent's REST mirror, sent again after TIMEOUT, UNAVAILABLE, BUSY, an unknown
 * outcome (no answer, a connection error, 5xx, OUTCOME_UNKNOWN) or a refused connection, until ok or
 * NOT_FOUND (which, after an unknown outcome, means that earlier attempt did it), for up to a minute.
 */
async function rollbackCall(agentUrl: string, r: Rollback): Promise<void> {
  const until = Date.now() + 60_000;
  let unknownBefore = false;
  for (let attempt = 1; attempt <= 30 && Date.now() < until; attempt++) {
    let kind: string;
    try {
      const response = await fetch(`${agentUrl}/v1/rollback_transaction`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ transaction_tag: r.tag, account_tag: r.caller }),
        signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
      });
      const text = await response.text();
      if (response.status !== 200) kind = `HTTP_${response.status}`;
      else {
        const parsed = JSON.parse(text) as { ok?: boolean; reason?: string };
        kind = parsed.ok === true ? 'ok' : (parsed.reason ?? 'BAD_BODY');
      }
    } catch (err) {
      const e = err as { name?: string; cause?: { code?: string } };
      kind = e.cause?.code === 'ECONNREFUSED' ? 'CONN_REFUSED' : e.name === 'TimeoutError' ? 'CLIENT_TIMEOUT' : 'CONN_ERROR';
    }
    r.answers.push(kind);
    if (kind === 'ok') {
      r.fate = 'ok';
      return;
    }
    if (kind === 'NOT_FOUND') {
      r.fate = unknownBefore ? 'inferred' : 'not-found';
      return;
    }
    if (!TRANSIENT.has(kind) && kind !== 'CONN_REFUSED') unknownBefore = true;
    await sleep(Math.min(300 * attempt, 2000));
  }
  r.fate = 'unknown';
}

/**
 * Rollbacks during the run, paced over what is left of it: half of them of records at the run's
 * cursor (the batch under way or the next one: most likely to meet a rerating in progress), half of
 * random records (before or after the cursor). Each call once; at most 4 in flight.
 */
async function rollbacks(run: Run, s: Services, seeded: Seeded, runId: string, sent: Rollback[]): Promise<void> {
  const wanted = run.options.rollbacks;
  if (wanted === 0) return;
  const rng = seededRng(run.options.seed * 17 + 11);
  const c = run.mongo!.collections;
  const startedAt = Date.now();
  let doc: Pick<ReratingDoc, 'after' | 'counts'> | null = null;
  const chosen = new Set<string>();
  const inOrder = seeded.records.filter((e) => e.selected).sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  const inFlight = new Set<Promise<void>>();
  const choose = (caller: string, tag: string, how: Rollback['how']): Rollback | undefined => {
    const key = callKey(caller, tag);
    if (chosen.has(key) || !seeded.calls.has(key)) return undefined;
    chosen.add(key);
    return { caller, tag, how, answers: [], fate: 'pending' };
  };
  await sleep(between(rng, 1000, 3000), run.stopFaults.signal);
  while (sent.length < wanted && !run.stopFaults.signal.aborted) {
    let r: Rollback | undefined;
    try {
      doc = await c.reratings.findOne({ _id: runId }, { projection: { after: 1, counts: 1 } });
    } catch (err) {
      run.note(`rollbacks: reading the run failed: ${errorText(err)}`);
    }
    if (rng() < 0.5) {
      // The run's cursor, then the next selected records in `_id` order from the seeded list (a query
      // would scan the collection: the MongoDB-wire server has no secondary indexes).
      const after = doc?.after ?? '';
      let lo = 0;
      let hi = inOrder.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (inOrder[mid].id <= after) lo = mid + 1;
        else hi = mid;
      }
      const ahead = inOrder.slice(lo, lo + 48);
      for (let tries = 0; tries < 5 && !r && ahead.length > 0; tries++) {
        const record = ahead[Math.floor(rng() * ahead.length)];
        r = choose(record.caller, record.tag, 'front');
      }
    }
    for (let tries = 0; tries < 20 && !r; tries++) {
      const record = seeded.records[Math.floor(rng() * seeded.records.length)];
      r = choose(record.caller, record.tag, 'random');
    }
    if (r) {
      sent.push(r);
      const p = rollbackCall(s.agentUrl, r).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    while (inFlight.size >= 4) await Promise.race(inFlight);
    // Paced over what is left of the run, at the speed it has had so far.
    const seen = doc?.counts.seen ?? 0;
    const elapsed = (Date.now() - startedAt) / 1000;
    const speed = seen > 0 && elapsed > 5 ? seen / elapsed : EXPECTED_RECORDS_PER_SECOND;
    const gapMs = ((Math.max(0, seeded.selected - seen) / speed) * 1000) / Math.max(1, wanted - sent.length);
    await sleep(Math.min(10_000, Math.max(50, gapMs)) * (0.5 + rng()), run.stopFaults.signal);
  }
  await Promise.all(inFlight);
}

// ============================================================================ faults

/** Workers killed one after the other every 6-15 s; redis-server every 25-45 s, half of the time losing all its data. */
function runFaults(run: Run, s: Services): Promise<unknown> {
  const clock = {
    seed: run.options.seed,
    phaseStart: run.phaseStart,
    endMs: run.options.seconds * 1000,
    stop: run.stopFaults.signal,
    note: (text: string) => run.note(text),
  };
  let nextWorker = 0;
  return Promise.all([
    faultLoop(clock, 'worker', 4000, [6000, 15_000], async (rng) => {
      const worker = s.workers[nextWorker++ % s.workers.length];
      await worker.kill('SIGKILL');
      bump(run.faults, 'worker SIGKILL + restart');
      await sleep(between(rng, 200, 1500));
      await worker.ensureUp();
    }),
    faultLoop(clock, 'redis', 15_000, [25_000, 45_000], async (rng) => {
      const keep = await killRedis(run, s, rng() < 0.5);
      bump(run.faults, keep ? 'redis SIGKILL + restart, data kept (SAVE first)' : 'redis SIGKILL + restart, all data lost');
      await sleep(between(rng, 500, 2500));
      await s.redis.ensureUp();
    }),
  ]);
}

// ============================================================================ settling

interface Quiet {
  intents: number;
  inFlight: number;
  markers: number;
  unappliedRollbacks: number;
  queued: number;
}

/** Markers whose ledger entry is not written yet (a settled one may wait for the account's next call). */
async function unsettledMarkers(c: NonNullable<Run['mongo']>['collections']): Promise<number> {
  let count = 0;
  for (const account of await c.accounts.find({ 'ledger_pending.0': { $exists: true } }, { projection: { ledger_pending: 1 } }).toArray()) {
    const ops = (account.ledger_pending ?? []).map((m) => m.op);
    count += ops.length - (await c.ledger.countDocuments({ _id: { $in: ops } }));
  }
  return count;
}

async function quiet(run: Run): Promise<Quiet> {
  const c = run.mongo!.collections;
  const [intents, inFlight, markers, unappliedRollbacks] = await Promise.all([
    c.transactions.countDocuments({ rerate: { $exists: true, $ne: null } }),
    c.transactions.countDocuments({ state: { $in: ['pending', 'rolling_back'] } }),
    unsettledMarkers(c),
    c.outcomes.countDocuments({ ...ROLLBACK_OUTCOMES, state: 'done', applied_at: { $exists: false } }),
  ]);
  let queued = await run.queues!.transactions.unfinished();
  const imports = await run.queues!.imports.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused', 'waiting-children');
  queued += Object.values(imports).reduce((a, b) => a + b, 0);
  return { intents, inFlight, markers, unappliedRollbacks, queued };
}

/** Waits (bounded) until no rerating, charge or refund is under way, no rollback waits and no job is queued. */
async function settle(run: Run, until: number): Promise<{ settled: boolean; last: Quiet | undefined; ms: number }> {
  const started = Date.now();
  let last: Quiet | undefined;
  let lastPrint = Date.now();
  for (;;) {
    try {
      last = await withTimeout(quiet(run), 20_000, 'settling');
      if (Object.values(last).every((n) => n === 0)) return { settled: true, last, ms: Date.now() - started };
    } catch (err) {
      run.note(`settling: ${errorText(err)}`);
    }
    if (Date.now() > until) return { settled: false, last, ms: Date.now() - started };
    if (Date.now() - lastPrint > 10_000) {
      lastPrint = Date.now();
      process.stdout.write(`[${run.elapsed()} settling] ${JSON.stringify(last)}\n`);
    }
    await sleep(1000);
  }
}

// ============================================================================ checks

interface Findings {
  present: number;
  presentChanged: number;
  absent: number;
  /** Rolled-back records whose correction had been made before their refund (their refund is the new fee). */
  absentCorrected: number;
  rerateEntries: number;
  rerateDifference: bigint;
  /** Sum of (new - old) over the selected records still there. */
  presentDifference: bigint;
  accountsChecked: number;
  rollbacks: Map<string, number>;
}

/**
 * (a) records, (b) balances, (c) ledger, (e) the run's counts; (d), the audit, is run by the caller.
 * Every seeded record is either still there or rolled back by a rollback this harness sent.
 */
async function verify(run: Run, seeded: Seeded, runDoc: ReratingDoc, sent: Rollback[]): Promise<Findings> {
  const c = run.mongo!.collections;
  const f: Findings = {
    present: 0,
    presentChanged: 0,
    absent: 0,
    absentCorrected: 0,
    rerateEntries: 0,
    rerateDifference: 0n,
    presentDifference: 0n,
    accountsChecked: 0,
    rollbacks: new Map(),
  };
  const limit = new Map<string, number>();
  const violation = (check: string, text: string) => {
    // Thousands of the same violation say nothing more than the first 20.
    bump(limit, check);
    if ((limit.get(check) ?? 0) <= 20) run.violation(check, text);
    else if (limit.get(check) === 21) run.violation(check, '... more of the same left out');
  };

  const found = new Map<string, TransactionDoc>();
  for await (const r of c.transactions.find({}, { projection: { segments: 0, destination_rate: 0 } })) found.set(r._id, r);
  const ledger = new Map<string, LedgerEntryDoc>();
  for await (const e of c.ledger.find({ kind: { $in: ['rerate', 'refund'] } })) ledger.set(e._id, e);

  // (a) the records.
  for (const r of found.values())
    if (!seeded.byId.has(r._id)) violation('a records', `record ${r._id} (${r.account_tag}/${r.transaction_tag}) was never seeded`);
  const absentOf = new Map<string, Expected[]>();
  for (const e of seeded.records) {
    const r = found.get(e.id);
    if (!r) {
      f.absent += 1;
      const key = callKey(e.caller, e.tag);
      absentOf.set(key, [...(absentOf.get(key) ?? []), e]);
      continue;
    }
    f.present += 1;
    const what = `record ${e.id} (${e.account}, call ${e.caller}/${e.tag})`;
    if (r.state !== 'charged') violation('a records', `${what}: state ${r.state}, not charged`);
    if (r.rerate) violation('a records', `${what}: a rerating still under way (run ${r.rerate.run})`);
    if (r.fee !== e.newFee) violation('a records', `${what}: fee ${r.fee}, expected ${e.newFee} (was ${e.oldFee})`);
    const history = r.reratings ?? [];
    if (e.newFee !== e.oldFee) {
      f.presentChanged += 1;
      const mine = history.filter((h) => h.run === runDoc._id);
      if (history.length !== 1 || mine.length !== 1)
        violation('a records', `${what}: ${history.length} reratings in its history (${mine.length} of this run), expected exactly 1`);
      else if (mine[0].fee_before !== e.oldFee || mine[0].fee_after !== e.newFee)
        violation('a records', `${what}: history says ${mine[0].fee_before} -> ${mine[0].fee_after}, expected ${e.oldFee} -> ${e.newFee}`);
    } else if (history.length > 0) {
      violation(
        'a records',
        `${what}: ${e.selected ? 'rated again at the same fee' : 'outside the selection'}, yet ${history.length} reratings in its history`,
      );
    }
  }
  // Rolled-back calls: every record gone came from a rollback sent; an acknowledged one took every party's record.
  const byCall = new Map(sent.map((r) => [callKey(r.caller, r.tag), r]));
  for (const r of sent) bump(f.rollbacks, r.fate);
  for (const [key, gone] of absentOf) {
    const r = byCall.get(key);
    const call = seeded.calls.get(key)!;
    if (!r)
      violation(
        'a records',
        `${gone.map((g) => `${g.id} (${g.account})`).join(', ')} of call ${gone[0].caller}/${gone[0].tag} gone, though never rolled back`,
      );
    else if (gone.length !== call.length)
      violation(
        'a records',
        `call ${r.caller}/${r.tag} half rolled back: ${gone.length} of its ${call.length} records gone (answers ${r.answers.join(' ')})`,
      );
  }
  for (const r of sent) {
    const key = callKey(r.caller, r.tag);
    const gone = absentOf.get(key)?.length ?? 0;
    if ((r.fate === 'ok' || r.fate === 'inferred') && gone === 0)
      violation('a records', `call ${r.caller}/${r.tag}: rollback answered ${r.answers.join(' ')}, yet its records are still there`);
    if (r.fate === 'not-found')
      violation('a records', `call ${r.caller}/${r.tag}: rollback answered ${r.answers.join(' ')} for a call that existed`);
  }

  // (c) the ledger: corrections of this run only, each on a selected changing record, of old - new; one refund per record gone.
  const correctedIds = new Set<string>();
  for (const entry of ledger.values()) {
    if (entry.kind !== 'rerate') continue;
    f.rerateEntries += 1;
    f.rerateDifference += -entry.amount;
    const [, runId, recordId] = entry._id.split(':');
    const e = seeded.byId.get(recordId);
    if (runId !== runDoc._id) violation('c ledger', `${entry._id}: a correction of another run`);
    if (!e) {
      violation('c ledger', `${entry._id}: a correction of an unknown record`);
      continue;
    }
    if (correctedIds.has(recordId)) violation('c ledger', `record ${recordId} corrected twice`);
    correctedIds.add(recordId);
    if (entry.ref !== recordId || entry.account_tag !== e.account)
      violation('c ledger', `${entry._id}: on ${entry.account_tag} ref ${entry.ref}, expected ${e.account} ref ${recordId}`);
    if (e.newFee === e.oldFee)
      violation(
        'c ledger',
        `${entry._id}: a correction of a record whose fee must not change (${e.selected ? 'unchanged price' : 'outside the selection'})`,
      );
    else if (entry.amount !== e.oldFee - e.newFee)
      violation('c ledger', `${entry._id}: amount ${entry.amount}, expected ${e.oldFee - e.newFee}`);
  }
  for (const e of seeded.records) {
    const present = found.has(e.id);
    const corrected = ledger.has(opIds.rerate(runDoc._id, e.id));
    const refund = ledger.get(opIds.refund(e.id));
    if (present) {
      if (e.newFee !== e.oldFee && !corrected)
        violation('c ledger', `record ${e.id} (${e.account}): its fee changed to ${e.newFee}, but no correction in the ledger`);
      if (refund) violation('c ledger', `record ${e.id} (${e.account}): still there, yet refunded ${refund.amount}`);
    } else {
      if (corrected) f.absentCorrected += 1;
      // A rolled-back record nets zero: its refund gives back the fee the ledger held when it went.
      const held = corrected ? e.newFee : e.oldFee;
      if (!refund) violation('c ledger', `record ${e.id} (${e.account}): rolled back without a refund`);
      else if (refund.amount !== held)
        violation(
          'c ledger',
          `record ${e.id} (${e.account}): refunded ${refund.amount}, but the ledger held ${held} for it (${corrected ? 'corrected' : 'not corrected'} first)`,
        );
    }
  }
  const expectedEntries = f.presentChanged + f.absentCorrected;
  if (f.rerateEntries !== expectedEntries)
    violation(
      'c ledger',
      `${f.rerateEntries} corrections in the ledger, expected ${expectedEntries} (${f.presentChanged} changed records still there + ${f.absentCorrected} rolled back after their correction)`,
    );

  // (b) the balances: after - before = sum over its records still there of (old - new) + the old fee of each record rolled back.
  const after = new Map<string, bigint>();
  for (const a of await c.accounts.find({}, { projection: { account_tag: 1, balance: 1 } }).toArray()) after.set(a.account_tag, a.balance);
  const moved = new Map<string, bigint>();
  for (const e of seeded.records) moved.set(e.account, (moved.get(e.account) ?? 0n) + (found.has(e.id) ? e.oldFee - e.newFee : e.oldFee));
  for (const tag of seeded.accounts) {
    f.accountsChecked += 1;
    const expected = moved.get(tag) ?? 0n;
    const actual = (after.get(tag) ?? 0n) - seeded.before.get(tag)!;
    if (actual !== expected)
      violation(
        'b balances',
        `${tag}: moved by ${actual}, expected ${expected} (before ${seeded.before.get(tag)}, after ${after.get(tag)})`,
      );
  }

  // (e) the run: done; every selected record read by the batch that counted it, once, less those rolled
  // back before it got there. A record still there was read and is counted as what it is (changed or
  // unchanged); a record rolled back may or may not have been read first. The price only rose, so the
  // run's difference lies between the differences of the changed records still there and of every
  // correction in the ledger. Nothing here is unratable: only a record being rolled back under the run
  // may be skipped.
  const counts = runDoc.counts;
  const selected = seeded.records.filter((e) => e.selected);
  const absentSelected = selected.filter((e) => !found.has(e.id)).length;
  const presentUnchanged = selected.filter((e) => found.has(e.id) && e.newFee === e.oldFee).length;
  const selectedUnchanged = selected.filter((e) => e.newFee === e.oldFee).length;
  const presentDifference = selected.filter((e) => found.has(e.id)).reduce((sum, e) => sum + (e.newFee - e.oldFee), 0n);
  f.presentDifference = presentDifference;
  if (runDoc.state !== 'done') violation('e run', `run ${runDoc._id} is ${runDoc.state}`);
  if (counts.changed + counts.unchanged + counts.skipped !== counts.seen)
    violation('e run', `changed + unchanged + skipped = ${counts.changed + counts.unchanged + counts.skipped}, seen ${counts.seen}`);
  if (counts.seen > seeded.selected || counts.seen < seeded.selected - absentSelected)
    violation(
      'e run',
      `seen ${counts.seen}: expected the ${seeded.selected} selected, less at most the ${absentSelected} rolled back (those gone before the run read them)`,
    );
  if (counts.changed < f.presentChanged || counts.changed > f.rerateEntries)
    violation(
      'e run',
      `the run counts ${counts.changed} changed: expected from the ${f.presentChanged} changed records still there to the ${f.rerateEntries} corrections in the ledger`,
    );
  if (runDoc.difference < presentDifference || runDoc.difference > f.rerateDifference)
    violation(
      'e run',
      `the run's difference is ${runDoc.difference}: expected from ${presentDifference} (the records still there) to ${f.rerateDifference} (every correction in the ledger)`,
    );
  if (counts.unchanged < presentUnchanged || counts.unchanged > selectedUnchanged)
    violation(
      'e run',
      `the run counts ${counts.unchanged} unchanged: expected from ${presentUnchanged} (still there) to ${selectedUnchanged} (selected)`,
    );
  if (counts.skipped > absentSelected)
    violation('e run', `the run counts ${counts.skipped} skipped: at most the ${absentSelected} selected records rolled back could be`);
  return f;
}

// ============================================================================ main

async function rerateChaos(run: Run): Promise<number> {
  const o = run.options;
  process.stdout.write(
    `rerate chaos: ${o.records} records over ${o.accounts} accounts, ${o.workers} workers, ${o.rollbacks} rollbacks, faults for at most ${o.seconds} s, seed ${o.seed}; temp dir ${run.tmp}\n`,
  );
  const s = await defineServices(run);
  await Promise.all([s.redis.ensureUp(), s.mongo.ensureUp()]);
  run.mongo = await connectMongo(s.mongoUrl, MONGO_DB);
  run.redis = new Redis(s.redisUrl, { maxRetriesPerRequest: 2, connectTimeout: 2000 });
  run.redis.on('error', () => undefined);
  run.queues = createQueues(run.redis, QUEUE_PREFIX);
  await ensureIndexes(run.mongo.collections);
  let t = Date.now();
  const seeded = await seedData(run.mongo, o);
  const prepaid = await run.mongo.collections.accounts.countDocuments({ type: 'PREPAID' });
  process.stdout.write(
    `seeded ${seeded.records.length} charged records (${seeded.calls.size} calls; ${seeded.selected} in the run's window, ${seeded.toChange} of them to change) ` +
      `over ${seeded.accounts.length} accounts (${prepaid} prepaid) in ${seconds(Date.now() - t)}\n`,
  );
  await raisePrices(run.mongo);
  // Workers and agent load the rating data at start: started after the price change, no announcement is needed.
  await Promise.all([s.agent.ensureUp(), ...s.workers.map((w) => w.ensureUp())]);
  const started = await startRun(run, s, seeded);
  if (started.total !== seeded.selected)
    run.violation('e run', `the CLI selected ${started.total} records, ${seeded.selected} are in the window`);
  process.stdout.write(
    `run ${started.id} started over ${started.total} records; faults until it is done (at most ${o.seconds} s); ` +
      `the recovery sweep runs every ${LONG_CALL_SCAN_SECONDS} s and queues a run again once still for ${seconds(TAKEOVER_MS)}\n`,
  );

  run.phase = 'faults';
  run.phaseStart = Date.now();
  const sent: Rollback[] = [];
  const faults = runFaults(run, s);
  const rolling = rollbacks(run, s, seeded, started.id, sent);
  const ceiling = run.phaseStart + o.seconds * 1000;
  let doc: ReratingDoc | null = null;
  let lastPrint = Date.now();
  let runUntil = ceiling + o.drainSeconds * 1000;
  for (;;) {
    try {
      doc = await withTimeout(run.mongo.collections.reratings.findOne({ _id: started.id }), 20_000, 'reading the run');
    } catch (err) {
      run.note(`reading the run: ${errorText(err)}`);
    }
    if (doc?.state === 'done') break;
    if (!run.stopFaults.signal.aborted && Date.now() > ceiling) {
      run.note(`the run was not done after ${o.seconds} s of faults: faults stopped, waiting ${o.drainSeconds} s more`);
      run.stopFaults.abort();
      run.phase = 'draining';
      runUntil = Date.now() + o.drainSeconds * 1000;
    }
    if (Date.now() > runUntil) break;
    if (Date.now() - lastPrint >= 10_000) {
      lastPrint = Date.now();
      const fates = new Map<string, number>();
      for (const r of sent) bump(fates, r.fate);
      process.stdout.write(
        `[${run.elapsed()} ${run.phase.padEnd(8)}] run ${doc?.counts.seen ?? '?'}/${seeded.selected} seen, ${doc?.counts.changed ?? '?'} changed, ` +
          `${doc?.counts.skipped ?? '?'} skipped, batch ${doc?.batch ?? '?'} | faults ${total(run.faults)} | rollbacks ${sent.length} sent` +
          `${fates.size ? ` (${[...fates].map(([k, n]) => `${k} ${n}`).join(', ')})` : ''}${run.down()}\n`,
      );
    }
    await sleep(1000);
  }
  const runDoneAt = Date.now();
  run.stopFaults.abort();
  run.phase = 'settling';
  await faults;
  await withTimeout(rolling, 120_000, 'rollbacks finishing').catch((err) => run.note(errorText(err)));
  await withTimeout(Promise.all(run.procs.map((p) => p.ensureUp())), 120_000, 'restarting every process after the faults');
  if (doc?.state !== 'done') {
    run.violation(
      'e run',
      `the run was not done ${seconds(runDoneAt - run.phaseStart)} after it started (${doc?.counts.seen ?? '?'}/${seeded.selected} seen)`,
    );
  }
  // The run is done; rollbacks whose job was lost with Redis are carried out by the recovery sweep.
  const settled = await settle(run, Date.now() + o.drainSeconds * 1000);
  if (!settled.settled) run.violation('settling', `the workers were not done after ${o.drainSeconds} s: ${JSON.stringify(settled.last)}`);
  doc = await run.mongo.collections.reratings.findOne({ _id: started.id });
  if (!doc) throw new Error(`run ${started.id} disappeared`);

  run.phase = 'checking';
  t = Date.now();
  const findings = await withTimeout(verify(run, seeded, doc, sent), 300_000, 'checks');
  const audit: AuditReport = await withTimeout(auditLedger(run.mongo.collections), 300_000, 'audit');
  for (const d of audit.differences)
    run.violation('d audit', `${d.account_tag}: balance off by ${d.balance_difference}, records off by ${d.records_difference}`);
  for (const c of audit.calls.slice(0, 20)) run.violation('d audit', `${c.account_tag}/${c.transaction_tag}: ${c.problem}`);
  if (audit.pending_markers > 0 || audit.records_in_flight > 0)
    run.violation('d audit', `not settled: ${audit.pending_markers} ledger markers, ${audit.records_in_flight} records in flight`);
  const checkMs = Date.now() - t;

  // The report.
  const runMs = (doc.finished_at ?? new Date()).getTime() - doc.created_at.getTime();
  const out: string[] = [];
  const line = (text: string) => out.push(text);
  line('');
  line(`faults: ${[...run.faults].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`);
  for (const p of run.procs) {
    const levels = [...p.levels].map(([k, n]) => `${k} ${n}`).join(', ');
    line(
      `  ${p.name}: started ${p.generation}x${p.startFailures ? `, ${p.startFailures} failed starts` : ''}${p.unexpectedExits.length ? `, exited by itself ${p.unexpectedExits.length}x` : ''}${levels ? `; log ${levels}` : ''}`,
    );
  }
  if (run.notes.length) line(`notes:\n  ${run.notes.slice(-15).join('\n  ')}`);
  const how = new Map<string, number>();
  for (const r of sent) bump(how, r.how);
  line(
    `rollbacks (agent REST /v1/rollback_transaction): ${sent.length} sent (${[...how].map(([k, n]) => `${k} ${n}`).join(', ')}); ` +
      `answers: ${[...findings.rollbacks].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}; ${findings.absent} records gone, ` +
      `${findings.absentCorrected} of them corrected by the run before their refund`,
  );
  line(
    `run ${doc._id} ${doc.state}: ${doc.counts.seen} seen of ${seeded.selected} selected, ${doc.counts.changed} changed, ${doc.counts.unchanged} unchanged, ` +
      `${doc.counts.skipped} skipped, difference ${doc.difference}; ${doc.batch} batches`,
  );
  line(
    `run time under faults: ${seconds(runMs)} = ${Math.round(doc.counts.seen / Math.max(runMs / 1000, 0.001))} records/s; settled ${seconds(settled.ms)} after; checks ${seconds(checkMs)}`,
  );
  line(
    `(a) records: ${findings.present} still there (${findings.presentChanged} at their new fee, history of one), ${findings.absent} rolled back; ` +
      `(b) balances: ${findings.accountsChecked} accounts; (c) ledger: ${findings.rerateEntries} corrections ` +
      `(= ${findings.presentChanged} changed still there + ${findings.absentCorrected} rolled back after correction), difference ${findings.rerateDifference}`,
  );
  line(
    `(d) audit: ${audit.differences.length} differences, ${audit.calls.length} call problems, ${audit.ledger_entries} ledger entries, ${audit.records} records, ` +
      `${audit.pending_markers} markers, ${audit.records_in_flight} in flight`,
  );
  if (run.violations.length) {
    line(`violations (${run.violations.length}):`);
    for (const v of run.violations) line(`  [${v.check}] ${v.text}`);
  }
  line(run.violations.length === 0 ? 'RESULT: PASS' : `RESULT: FAIL (${run.violations.length} violations)`);
  process.stdout.write(`${out.join('\n')}\n`);
  return run.violations.length === 0 ? 0 : 1;
}

async function main(): Promise<void> {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${errorText(err)}\n${USAGE}`);
    process.exit(2);
  }
  const run = new Run(options);
  const interrupted = (signal: string) => {
    run.interrupted = true;
    process.stderr.write(`\n${signal}: stopping every process of the run\n`);
    void run.cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', () => interrupted('SIGINT'));
  process.once('SIGTERM', () => interrupted('SIGTERM'));
  const limitMs = (options.seconds + 2 * options.drainSeconds + 600 + options.records / 1000) * 1000;
  const watchdog = setTimeout(() => {
    process.stderr.write(`watchdog: the run took longer than ${seconds(limitMs)}; stopping\n`);
    void run.cleanup().finally(() => process.exit(2));
  }, limitMs);
  let code: number;
  try {
    code = await rerateChaos(run);
  } catch (err) {
    if (!run.interrupted) {
      process.stderr.write(`rerate chaos failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      if (run.notes.length) process.stderr.write(`notes:\n  ${run.notes.join('\n  ')}\n`);
    }
    code = 2;
  }
  clearTimeout(watchdog);
  await withTimeout(run.cleanup(), 60_000, 'cleanup').catch((err) => process.stderr.write(`${errorText(err)}\n`));
  process.exit(run.interrupted ? 130 : code);
}

void main();
