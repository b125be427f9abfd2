/**
 * The chaos run of issue 9: concurrent clients drive begin/end, recordTransaction and
 * rollbackTransaction through the agent's REST mirror, sending a request again after a TIMEOUT or a
 * connection error, while real processes are killed and restarted: the worker processes, the agent,
 * redis-server (sometimes losing all its data) and the MongoDB-wire server (keeping its data). When the
 * faults stop and the workers are done, MongoDB is checked against the ledger audit and against every
 * answer the clients were given. See test/chaos/README.md.
 *
 *   npm run test:chaos -- [--seconds 90] [--clients 20] [--seed N] [--kill-mongo] [--keep]
 *
 * Exit status: 0 no violation, 1 violations found, 2 the run could not be carried out, 130 interrupted.
 */
import { setMaxListeners } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { callId, isReservation } from '../../src/shared/domain/types';
import { auditLedger, AuditReport } from '../../src/shared/domain/ledger/audit';
import { connectMongo, Mongo } from '../../src/shared/domain/store';
import { createQueues, Queues } from '../../src/shared/domain/queues/queues';
import { takeoverMs } from '../../src/workers/maintenance/recover';
import { withParentDeathSignal } from '../../src/shared/infra/services/process-tools';
import { account, carrier, pricelist, rate } from '../support/seed';
import { between, pick, Rng, seededRng } from '../support/rng';
import {
  bump,
  defineServers,
  errorText,
  faultLoop as sharedFaultLoop,
  HOST,
  httpReady,
  killRedis,
  Proc,
  seconds,
  sleep,
  total,
  withTimeout,
} from './services';

const ROOT = path.resolve(__dirname, '..', '..');
const MONGO_DB = 'chaos';
const QUEUE_PREFIX = 'chaos';

// Settings of the agent and workers: short, so that crashes are recovered within the run.
const AGENT_TIMEOUT_MS = 3000;
/** The agent answers within AGENT_TIMEOUT_MS + AGENT_ABANDON_MS (docs/AGENT.md, "When an answer comes"). */
const AGENT_ABANDON_MS = 1500;
const JOB_LOCK_MS = 2000;
const LONG_CALL_SCAN_SECONDS = 2;
/**
 * Decisions are kept a minute (the least allowed) instead of a day, so that calls longer than their
 * decisions' lifetime run within the phase (issue 31, defect 3): 'long' calls last 75 s.
 */
const OUTCOME_RETENTION_SECONDS = 60;
const LONG_CALL_SECS = OUTCOME_RETENTION_SECONDS + 15;
/** The recovery sweep takes over interrupted work this long after its deadline (src/workers/maintenance/recover.ts, takeoverAfterMs). */
const TAKEOVER_MS = takeoverMs(JOB_LOCK_MS);
/**
 * A request without an answer by then is "no answer" (outcome unknown), as a proxy's HTTP timeout set
 * above the agent's bound (docs/SIP.md): a loaded machine gets 2 s more.
 */
const CLIENT_TIMEOUT_MS = AGENT_TIMEOUT_MS + AGENT_ABANDON_MS + 2000;

// ============================================================================ options

interface Options {
  /** Length of the fault phase (clients run during it). */
  seconds: number;
  clients: number;
  /** Bound on the clients finishing their current call once the faults stop. */
  settleSeconds: number;
  /** Bound on waiting for the workers to finish (queues drained, recovery run). */
  drainSeconds: number;
  seed: number;
  /** Also restart the MongoDB-wire server with SIGKILL (half of its restarts), not only SIGTERM. */
  killMongo: boolean;
  /** Seconds between MongoDB restarts; 0 = the default schedule (every 35-50 s from mid-phase). */
  mongoEvery: number;
  /** Keep the temporary directory (process logs) instead of removing it. */
  keep: boolean;
}

const USAGE = `usage: npm run test:chaos -- [options]
  --seconds N         length of the fault phase (default 90)
  --clients N         concurrent clients (default 20)
  --seed N            seed of the clients' and faults' random choices (default: random, printed)
  --kill-mongo        restart the MongoDB-wire server with SIGKILL half of the time (default: SIGTERM only)
  --mongo-every N     restart the MongoDB-wire server every N to N+3 s from 10 % of the phase
                      (default: every 35-50 s from mid-phase); frequent restarts find restart races
  --settle-seconds N  bound on clients finishing their calls after the faults (default 60)
  --drain-seconds N   bound on the workers finishing after that (default 150)
  --keep              keep the temporary directory with the process logs
`;

class UsageError extends Error {}

function parseOptions(argv: string[]): Options {
  const options: Options = {
    seconds: 90,
    clients: 20,
    settleSeconds: 60,
    drainSeconds: 150,
    seed: Math.floor(Math.random() * 1_000_000),
    killMongo: false,
    mongoEvery: 0,
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
      case '--seconds':
        options.seconds = int(5, 3600);
        break;
      case '--clients':
        options.clients = int(1, 500);
        break;
      case '--seed':
        options.seed = int(0, 2 ** 31);
        break;
      case '--settle-seconds':
        options.settleSeconds = int(5, 3600);
        break;
      case '--drain-seconds':
        options.drainSeconds = int(5, 3600);
        break;
      case '--kill-mongo':
        options.killMongo = true;
        break;
      case '--mongo-every':
        options.mongoEvery = int(3, 3600);
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
  return options;
}

// ============================================================================ the run's shared state

interface Violation {
  check: string;
  text: string;
}

class Run {
  readonly startedAt = Date.now();
  readonly tmp = mkdtempSync(path.join(os.tmpdir(), 'rating-chaos-'));
  closing = false;
  interrupted = false;
  /** Aborted when the fault phase ends: no new faults, no new calls. */
  readonly stopFaults = new AbortController();
  /** Aborted when the clients are out of time: requests in flight are abandoned. */
  readonly hardStop = new AbortController();
  phaseStart = 0;
  phase = 'setup';

  readonly sent = new Map<string, number>();
  readonly retries = new Map<string, number>();
  readonly answers = new Map<string, number>();
  readonly answersByOp = new Map<string, Map<string, number>>();
  readonly faults = new Map<string, number>();
  /** `rating audit` run during the load (issue 31): how many started, finished, and failed to run. */
  readonly liveAudits = { started: 0, finished: 0, failed: 0, differences: 0, calls: 0 };
  readonly notes: string[] = [];
  readonly violations: Violation[] = [];
  readonly procs: Proc[] = [];
  harnessMongo: Mongo | undefined;
  harnessRedis: Redis | undefined;
  harnessQueues: Queues | undefined;
  private cleaned: Promise<void> | undefined;

  constructor(readonly options: Options) {
    // Every sleeping client and request listens to these.
    setMaxListeners(0, this.stopFaults.signal, this.hardStop.signal);
  }

  violation(check: string, text: string): void {
    this.violations.push({ check, text });
  }

  note(text: string): void {
    this.notes.push(`[${seconds(Date.now() - this.startedAt)}] ${text}`);
  }

  progress(): void {
    const a = this.answers;
    const get = (k: string) => a.get(k) ?? 0;
    const noAnswer = [...a]
      .filter(([k]) => k === 'CONN_ERROR' || k === 'CLIENT_TIMEOUT' || k === 'ABORTED' || k === 'BAD_BODY' || /^HTTP_5/.test(k))
      .reduce((s, [, n]) => s + n, 0);
    const refused = [...a]
      .filter(
        ([k]) =>
          !['ok', 'TIMEOUT', 'UNAVAILABLE', 'BUSY', 'CONN_REFUSED', 'CONN_ERROR', 'CLIENT_TIMEOUT', 'ABORTED', 'BAD_BODY'].includes(k) &&
          !/^HTTP_/.test(k),
      )
      .reduce((s, [, n]) => s + n, 0);
    const down = this.procs.filter((p) => p.state !== 'up').map((p) => `${p.name}(${p.state})`);
    process.stdout.write(
      `[${String(Math.round((Date.now() - this.startedAt) / 1000)).padStart(4)}s ${this.phase.padEnd(8)}] requests ${total(this.sent)}: ok ${get('ok')}, refused ${refused}, ` +
        `timeout ${get('TIMEOUT')}, unavailable ${get('UNAVAILABLE')}, no answer ${noAnswer}, conn refused ${get('CONN_REFUSED')} | faults ${total(this.faults)}` +
        `${down.length ? ` | down: ${down.join(' ')}` : ''}\n`,
    );
  }

  /** Stops everything this run started and removes its directory; safe to call more than once. */
  cleanup(): Promise<void> {
    this.cleaned ??= (async () => {
      this.closing = true;
      this.stopFaults.abort();
      this.hardStop.abort();
      await Promise.allSettled(this.procs.map((p) => p.destroy()));
      await Promise.allSettled([
        this.harnessQueues ? withTimeout(this.harnessQueues.close(), 5000, 'closing queues') : Promise.resolve(),
        this.harnessMongo ? withTimeout(this.harnessMongo.close(), 5000, 'closing MongoDB client') : Promise.resolve(),
      ]);
      this.harnessRedis?.disconnect();
      await Promise.allSettled(this.procs.map((p) => p.closeLog()));
      if (this.options.keep) process.stdout.write(`kept ${this.tmp} (process logs under logs/)\n`);
      else rmSync(this.tmp, { recursive: true, force: true });
    })();
    return this.cleaned;
  }
}

interface Services {
  redis: Proc;
  mongo: Proc;
  agent: Proc;
  workers: Proc[];
  redisUrl: string;
  mongoUrl: string;
  agentUrl: string;
  redisDir: string;
}

async function defineServices(run: Run): Promise<Services> {
  for (const file of ['agent', 'workers'].map((d) => path.join(ROOT, 'dist', d, 'main.js'))) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first (npm run test:chaos does)`);
  }
  // redis-server (no persistence) and the MongoDB-wire server (keeping its data), each on a fixed port.
  const { redis, mongo, redisUrl, mongoUrl, redisDir, ports } = await defineServers(run, 3);
  const [agentPort, ...workerPorts] = ports;
  const env = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
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
    OUTCOME_RETENTION_SECONDS: String(OUTCOME_RETENTION_SECONDS),
    RATE_LIMIT_MAX: '0',
    RATING_TOKENS: '',
    ...extra,
  });
  const agent = new Proc(run, {
    name: 'agent',
    command: () => withParentDeathSignal(process.execPath, [path.join(ROOT, 'dist', 'agent', 'main.js')]),
    env: env({ AGENT_PORT: String(agentPort) }),
    ready: () => httpReady(agentPort),
    readyTimeoutMs: 30000,
    pino: true,
  });
  const workers = workerPorts.map(
    (port, i) =>
      new Proc(run, {
        name: `worker${i + 1}`,
        command: () => withParentDeathSignal(process.execPath, [path.join(ROOT, 'dist', 'workers', 'main.js')]),
        // The second worker groups processing's commands over 50 ms windows: a redelivered processing
        // job then races a rollback over a wider gap (issue 31, defect 6).
        env: env({ METRICS_PORT: String(port), ...(i === 1 ? { PROCESSING_WINDOW_MS: '50', PROCESSING_CONCURRENCY: '64' } : {}) }),
        ready: () => httpReady(port),
        readyTimeoutMs: 30000,
        pino: true,
      }),
  );
  return { redis, mongo, agent, workers, redisUrl, mongoUrl, agentUrl: `http://${HOST}:${agentPort}`, redisDir };
}

// ============================================================================ accounts and rates

interface AccountSeed {
  tag: string;
  type: 'PREPAID' | 'POSTPAID';
  balance: bigint;
  max: number | null;
  linked: string[];
  /**
   * 'pl': connect fee 1; 'plp' (parents): connect fee 2. Both 60 per minute in 1 s steps: fee = connect
   * fee + seconds. 'plf' and 'plfp' (the failover accounts) also rate carrier c2, dearer (RATES).
   */
  pricelist: Pricelist;
  active: boolean;
}

const ACCOUNTS: AccountSeed[] = [
  { tag: 'a1', type: 'PREPAID', balance: 200_000n, max: null, linked: ['p1'], pricelist: 'pl', active: true },
  { tag: 'a2', type: 'PREPAID', balance: 4_000n, max: 3, linked: [], pricelist: 'pl', active: true },
  { tag: 'a3', type: 'PREPAID', balance: 600n, max: null, linked: [], pricelist: 'pl', active: true },
  { tag: 'a4', type: 'POSTPAID', balance: 0n, max: 4, linked: [], pricelist: 'pl', active: true },
  { tag: 'a5', type: 'POSTPAID', balance: 0n, max: null, linked: ['p1'], pricelist: 'pl', active: true },
  { tag: 'a6', type: 'PREPAID', balance: 100_000n, max: 2, linked: [], pricelist: 'pl', active: true },
  { tag: 'a7', type: 'POSTPAID', balance: 0n, max: null, linked: [], pricelist: 'pl', active: true },
  { tag: 'a8', type: 'PREPAID', balance: 10_000n, max: null, linked: [], pricelist: 'pl', active: false },
  { tag: 'a9', type: 'PREPAID', balance: 50_000n, max: null, linked: ['p2'], pricelist: 'pl', active: true },
  { tag: 'p1', type: 'POSTPAID', balance: 0n, max: 8, linked: [], pricelist: 'plp', active: true },
  { tag: 'p2', type: 'PREPAID', balance: 3_000n, max: null, linked: [], pricelist: 'plp', active: true },
  // Failover (issue 31, defect 1): authorized, then begun on the dearer carrier c2 and cut at the grant.
  { tag: 'f1', type: 'PREPAID', balance: 3_000n, max: null, linked: [], pricelist: 'plf', active: true },
  { tag: 'f2', type: 'PREPAID', balance: 100_000n, max: null, linked: ['fp'], pricelist: 'plf', active: true },
  { tag: 'fp', type: 'PREPAID', balance: 3_000n, max: null, linked: [], pricelist: 'plfp', active: true },
];
const FAILOVER_CALLERS = ['f1', 'f2'] as const;
const CALLERS = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a9'];
/** Two callers under one parent: the same tag on both is two calls for the parent. */
const TWINS = ['a1', 'a5'] as const;
type Pricelist = 'pl' | 'plp' | 'plf' | 'plfp';
type CarrierTag = 'c1' | 'c2';
/** Connect fee and price per second of each pricelist on each carrier (all in 1 s steps). */
const RATES: Record<Pricelist, Partial<Record<CarrierTag, { connect: bigint; perSecond: bigint }>>> = {
  pl: { c1: { connect: 1n, perSecond: 1n } },
  plp: { c1: { connect: 2n, perSecond: 1n } },
  plf: { c1: { connect: 1n, perSecond: 1n }, c2: { connect: 1n, perSecond: 4n } },
  plfp: { c1: { connect: 2n, perSecond: 1n }, c2: { connect: 2n, perSecond: 10n } },
};
/** Carrier c2's address, as a proxy names the carrier that answered (`carrier_ip`). */
const C2_ADDRESS = 'c2.example.net:5060';
const seedOf = new Map(ACCOUNTS.map((a) => [a.tag, a]));

function partiesOf(caller: string): string[] {
  return [caller, ...(seedOf.get(caller)?.linked ?? [])];
}

function feeOf(party: string, secs: number, carrierTag: CarrierTag = 'c1'): bigint {
  const seed = seedOf.get(party);
  const terms = seed ? (RATES[seed.pricelist][carrierTag] ?? RATES[seed.pricelist].c1!) : undefined;
  return terms ? terms.connect + terms.perSecond * BigInt(secs) : 0n;
}

async function seedData(mongo: Mongo): Promise<void> {
  const c = mongo.collections;
  await c.carriers.insertMany([carrier('c1'), carrier('c2')]);
  await c.pricelists.insertMany((Object.keys(RATES) as Pricelist[]).map((tag) => pricelist(tag)));
  await c.rates.insertMany(
    Object.entries(RATES).flatMap(([pl, byCarrier]) =>
      Object.entries(byCarrier).map(([carrierTag, terms]) =>
        rate(pl, carrierTag, '39', {
          rate: Number(terms.perSecond) * 60,
          rate_increment: 1,
          connect_fee: Number(terms.connect),
          interval_start: 0,
        }),
      ),
    ),
  );
  await c.accounts.insertMany(
    ACCOUNTS.map((a) =>
      account(a.tag, {
        type: a.type,
        balance: a.balance,
        max_concurrent_transactions: a.max,
        linked_accounts: a.linked,
        pricelist_tags: [a.pricelist],
        active: a.active,
      }),
    ),
  );
}

// ============================================================================ clients

type Op = 'begin' | 'end' | 'record' | 'rollback';
const PATHS: Record<Op, string> = {
  begin: '/v1/begin_transaction',
  end: '/v1/end_transaction',
  record: '/v1/record_transaction',
  rollback: '/v1/rollback_transaction',
};
/** Answers that say the operation did not happen and will not: the same request may be sent again. */
const TRANSIENT = new Set(['TIMEOUT', 'UNAVAILABLE', 'BUSY']);
/** Refusals that, to a retry after an attempt of unknown outcome, mean that attempt happened. */
const ALREADY: Record<Op, ReadonlySet<string>> = {
  begin: new Set(['DUPLICATE_TRANSACTION']),
  record: new Set(['DUPLICATE_TRANSACTION']),
  end: new Set(['ALREADY_ENDED', 'NOT_FOUND']),
  rollback: new Set(['NOT_FOUND']),
};

/**
 * What one HTTP attempt told: 'ok'; a refusal; a transient refusal (TIMEOUT, UNAVAILABLE, BUSY: did
 * not happen); 'none' (connection refused: never reached the agent); 'unknown' (connection lost,
 * no answer in time, HTTP 5xx: may or may not have happened); 'bad' (HTTP 4xx to a valid request).
 */
interface Answer {
  kind: string;
  effect: 'ok' | 'refused' | 'transient' | 'none' | 'unknown' | 'bad';
  detail?: string;
}

interface Policy {
  maxAttempts: number;
  windowMs: number;
  /** Probability of sending the request again after a transient refusal (otherwise the client gives up). */
  retryTransient: number;
}
// Some begins and records are given up after a TIMEOUT, so that "a TIMEOUT leaves nothing behind" is checked.
const START_POLICY: Policy = { maxAttempts: 10, windowMs: 25_000, retryTransient: 0.6 };
// A switch insists on ending (and rolling back) a call it knows about.
const FINISH_POLICY: Policy = { maxAttempts: 25, windowMs: 45_000, retryTransient: 1 };

interface OpOutcome {
  verdict: 'happened' | 'not-happened' | 'unknown';
  /** Happened, concluded from an "already" refusal to a retry after an attempt of unknown outcome. */
  inferred: boolean;
  final: string;
  /** The final answer was the first that reached the agent (only "connection refused" before it). */
  firstDelivered: boolean;
  answers: string[];
}

/** What the chaos clients read of an authorization's answer. */
interface AuthorizationReply {
  authorized?: boolean;
  unauthorized_reason?: string;
  max_available_units?: number;
  carriers?: string[];
}

/** The client's knowledge of a call once it is done with it. */
type Expect = 'charged' | 'absent' | 'running' | 'unknown';

class Call {
  readonly steps: string[] = [];
  expect: Expect = 'unknown';
  /** Whether the expectation rests on direct acknowledgements (ok answers), not on inferences. */
  firm = false;
  why = 'not started';
  /** rollbackTransaction answered ok (directly): the tag may be used again. */
  rolledBackOk = false;
  /**
   * end was answered "did not happen" (TIMEOUT, UNAVAILABLE, BUSY), then ALREADY_ENDED to the same
   * request: one of the two answers is false, and the final state tells which.
   */
  endContradicted = false;
  /** The use of the same tag before this one (rolled back). */
  previous: Call | undefined;
  readonly t0: number;
  /** The carrier the call went out on: c2 is a failover call's (named in begin as `carrier_ip`). */
  readonly carrier: CarrierTag;

  constructor(
    readonly caller: string,
    readonly tag: string,
    readonly incarnation: number,
    readonly scenario: string,
    readonly destination: string,
    readonly secs: number,
    opts: { t0?: number; carrier?: CarrierTag } = {},
  ) {
    // Calls begin a minute ago and ended before they are reported, as a switch reports them.
    this.t0 = opts.t0 ?? Math.floor(Date.now() / 1000) * 1000 - 60_000;
    this.carrier = opts.carrier ?? 'c1';
  }

  fee(party: string): bigint {
    return feeOf(party, this.secs, this.carrier);
  }

  get key(): string {
    return `${this.caller}\u0000${this.tag}`;
  }

  get label(): string {
    return `${this.caller}/${this.tag}${this.incarnation > 1 ? ` (use #${this.incarnation} of the tag)` : ''}`;
  }

  get history(): string {
    return this.steps.join(', ') + (this.previous ? `; before: ${this.previous.scenario}: ${this.previous.history}` : '');
  }

  set(expect: Expect, why: string, firm = this.firm): void {
    this.expect = expect;
    this.why = why;
    this.firm = firm;
  }

  note(op: Op, outcome: OpOutcome): void {
    this.steps.push(`${op}[${outcome.answers.join(' ')}]`);
  }

  beginBody() {
    return {
      transaction_tag: this.tag,
      account_tag: this.caller,
      source: `1000${this.caller}`,
      destination: this.destination,
      timestamp_begin: new Date(this.t0).toISOString(),
      ...(this.carrier === 'c2' ? { carrier_ip: C2_ADDRESS } : {}),
    };
  }

  endBody() {
    return { transaction_tag: this.tag, account_tag: this.caller, timestamp_end: new Date(this.t0 + this.secs * 1000).toISOString() };
  }

  recordBody() {
    return { ...this.beginBody(), timestamp_end: new Date(this.t0 + this.secs * 1000).toISOString() };
  }

  rollbackBody() {
    return { transaction_tag: this.tag, account_tag: this.caller };
  }
}

class Client {
  private readonly rng: Rng;
  private serial = 0;

  constructor(
    private readonly run: Run,
    private readonly id: number,
    private readonly agentUrl: string,
    private readonly calls: Call[],
  ) {
    this.rng = seededRng(run.options.seed * 1000 + id);
  }

  async loop(): Promise<void> {
    // Client 2 first holds calls longer than their decisions live (issue 31, defect 3), when the phase allows.
    if (this.id === 2 && this.run.options.seconds >= LONG_CALL_SECS + 10) {
      await Promise.all(
        ['a7', 'a1'].map((caller) => this.beginEnd(this.newCall('long', caller, { t0: Date.now(), secs: LONG_CALL_SECS }), 'none')),
      );
    }
    while (!this.run.stopFaults.signal.aborted && !this.run.hardStop.signal.aborted) {
      try {
        // Client 1 alone places the failover calls: one at a time, so each grant is the whole promise.
        if (this.id === 1 && this.rng() < 0.4) await this.failover(pick(this.rng, FAILOVER_CALLERS));
        else await this.scenario();
      } catch (err) {
        this.run.note(`client ${this.id}: ${errorText(err)}`);
      }
      await sleep(between(this.rng, 0, 200), this.run.stopFaults.signal);
    }
  }

  private newCall(
    scenario: string,
    caller: string,
    opts: { tag?: string; incarnation?: number; destination?: string; secs?: number; t0?: number; carrier?: CarrierTag } = {},
  ): Call {
    const destination = opts.destination ?? `39${between(this.rng, 100000, 999999)}`;
    const call = new Call(
      caller,
      opts.tag ?? `c${this.id}-${++this.serial}`,
      opts.incarnation ?? 1,
      scenario,
      destination,
      opts.secs ?? between(this.rng, 1, 40),
      { t0: opts.t0, carrier: opts.carrier },
    );
    this.calls.push(call);
    return call;
  }

  private async scenario(): Promise<void> {
    const r = this.rng();
    const caller = pick(this.rng, CALLERS);
    if (r < 0.06) {
      await this.lateBegin(this.newCall('late-begin', caller));
      return;
    }
    if (r < 0.4) {
      await this.beginEnd(this.newCall('begin-end', caller), 'none');
      return;
    }
    if (r < 0.62) {
      await this.record(this.newCall('record', caller), false);
      return;
    }
    if (r < 0.72) return this.reuseAfter(await this.beginEnd(this.newCall('begin-rollback', caller), 'running'));
    if (r < 0.8) return this.reuseAfter(await this.beginEnd(this.newCall('begin-end-rollback', caller), 'ended'));
    if (r < 0.88) return this.reuseAfter(await this.record(this.newCall('record-rollback', caller), true));
    if (r < 0.95) {
      const tag = `tw${this.id}-${++this.serial}`;
      const asRecord = this.rng() < 0.5;
      await Promise.all(
        TWINS.map((twin) => {
          const call = this.newCall(asRecord ? 'twins-record' : 'twins-begin-end', twin, { tag });
          return asRecord ? this.record(call, false) : this.beginEnd(call, 'none');
        }),
      );
      return;
    }
    // Refusals: an unrated destination, an inactive account, an unknown account.
    const probe = pick(this.rng, ['unreachable', 'inactive', 'unknown-account'] as const);
    const call =
      probe === 'unreachable'
        ? this.newCall('refused-unreachable', caller, { destination: `99${between(this.rng, 100000, 999999)}` })
        : this.newCall(probe === 'inactive' ? 'refused-inactive' : 'refused-unknown-account', probe === 'inactive' ? 'a8' : 'ghost');
    await this.refusalProbe(call, this.rng() < 0.5 ? 'begin' : 'record');
  }

  /** The same tag again after an acknowledged rollback (a past defect), as a new call with a new length. */
  private async reuseAfter(call: Call): Promise<void> {
    if (!call.rolledBackOk || this.rng() >= 0.6 || this.run.hardStop.signal.aborted) return;
    const asRecord = this.rng() < 0.5;
    const again = this.newCall(asRecord ? 'tag-reused-record' : 'tag-reused-begin-end', call.caller, {
      tag: call.tag,
      incarnation: call.incarnation + 1,
      destination: call.destination,
    });
    again.previous = call;
    if (asRecord) await this.record(again, false);
    else await this.beginEnd(again, 'none');
  }

  private async beginEnd(call: Call, rollback: 'none' | 'running' | 'ended'): Promise<Call> {
    // Half the calls are authorized with their tag first, as a SIP proxy does (issue 11), so the begin
    // takes over a reservation under the same faults. The answer decides nothing here: begin follows.
    if (call.scenario !== 'failover' && this.rng() < 0.5) await this.authorizeFirst(call);
    const b = await this.runOp('begin', call.beginBody(), START_POLICY);
    call.note('begin', b);
    if (b.verdict === 'unknown') {
      call.set('unknown', 'begin: outcome unknown');
      return call;
    }
    if (b.verdict === 'not-happened') {
      if (b.final === 'DUPLICATE_TRANSACTION' && b.firstDelivered) {
        this.run.violation(
          'answers',
          `${call.label}: begin refused DUPLICATE_TRANSACTION though no call with this tag was live (${call.history})`,
        );
        call.set('unknown', 'begin refused as a duplicate');
      } else {
        call.set('absent', `begin answered ${b.final}`);
      }
      return call;
    }
    call.set('running', b.inferred ? 'begin inferred from DUPLICATE_TRANSACTION after a lost answer' : 'begin acknowledged', !b.inferred);
    // A long call ends when it ends (its timestamp_end is then), whatever the faults.
    if (call.scenario === 'long') await sleep(Math.max(0, call.t0 + call.secs * 1000 - Date.now()), this.run.hardStop.signal);
    else await sleep(between(this.rng, 0, 1500));
    if (rollback === 'running') {
      await this.rollback(call);
      if (call.expect !== 'running') return call;
    }
    const e = await this.runOp('end', call.endBody(), FINISH_POLICY);
    call.note('end', e);
    if (e.verdict === 'unknown') {
      call.set('unknown', 'end: outcome unknown');
      return call;
    }
    if (e.verdict === 'not-happened') {
      if (e.final === 'NOT_FOUND') {
        if (call.firm) {
          this.run.violation(
            'answers',
            `${call.label}: end answered NOT_FOUND, but the begin was acknowledged and no end or rollback had taken effect (${call.history})`,
          );
          call.set('unknown', 'end found no call');
        } else {
          call.set('absent', 'the inferred begin did not last (end found no call)');
        }
      } else if (e.final === 'ALREADY_ENDED' && e.firstDelivered) {
        this.run.violation('answers', `${call.label}: end refused ALREADY_ENDED though this call had never been ended (${call.history})`);
        call.set('unknown', 'end refused as already ended');
      } else {
        call.endContradicted = e.final === 'ALREADY_ENDED';
        call.set('running', `end answered ${e.final}: not applied, the call still runs`);
      }
      return call;
    }
    call.set('charged', e.inferred ? `end inferred from ${e.final} after a lost answer` : 'end acknowledged', call.firm && !e.inferred);
    if (rollback === 'ended') {
      // Sometimes before processing has run, sometimes after.
      await sleep(between(this.rng, 0, 1500));
      await this.rollback(call);
    }
    return call;
  }

  private async record(call: Call, rollback: boolean): Promise<Call> {
    const r = await this.runOp('record', call.recordBody(), START_POLICY);
    call.note('record', r);
    if (r.verdict === 'unknown') {
      call.set('unknown', 'record: outcome unknown');
      return call;
    }
    if (r.verdict === 'not-happened') {
      if (r.final === 'DUPLICATE_TRANSACTION' && r.firstDelivered) {
        this.run.violation(
          'answers',
          `${call.label}: record refused DUPLICATE_TRANSACTION though no call with this tag was live (${call.history})`,
        );
        call.set('unknown', 'record refused as a duplicate');
      } else {
        call.set('absent', `record answered ${r.final}`);
      }
      return call;
    }
    call.set('charged', r.inferred ? 'record inferred from DUPLICATE_TRANSACTION after a lost answer' : 'record acknowledged', !r.inferred);
    if (rollback) {
      await sleep(between(this.rng, 0, 500));
      await this.rollback(call);
    }
    return call;
  }

  /**
   * A proxy failing over to a dearer carrier (issue 31, defect 1; docs/SIP.md, "Failover"): authorized
   * on the caller's carriers, the call is begun on c2 (as if c1 had answered 503) and, a third of the
   * time, cut at the grant a second late (the proxy's 1 s timer). Placed one at a time (client 1 only),
   * so the prepaid parties must never end below zero (check 5).
   */
  private async failover(caller: (typeof FAILOVER_CALLERS)[number]): Promise<void> {
    const tag = `fo${this.id}-${++this.serial}`;
    const answer = await this.authorize(tag, caller, '39555000');
    const units = answer?.authorized ? (answer.max_available_units ?? 0) : 0;
    // c2 is left out of the list once a party cannot pay a second there: the proxy then uses c1.
    const onC2 = answer?.carriers?.some((c) => c.endsWith(C2_ADDRESS)) ?? false;
    if (units <= 0) return;
    const secs = this.rng() < 0.34 ? units + 1 : Math.min(units, between(this.rng, 1, 20));
    const call = this.newCall('failover', caller, {
      tag,
      destination: '39555000',
      secs,
      t0: Math.floor(Date.now() / 1000) * 1000 - secs * 1000,
      carrier: onC2 ? 'c2' : 'c1',
    });
    await this.beginEnd(call, 'none');
  }

  /**
   * A proxy whose HTTP timeout is shorter than the agent's bound (issue 31, defect 7): the begin's
   * answer comes too late or not at all, so at hangup (after the agent's bound has passed) it falls
   * back as docs/SIP.md says: end first, and record the whole call only if end finds no call.
   */
  private async lateBegin(call: Call): Promise<void> {
    const sentAt = Date.now();
    const b = await this.post('begin', call.beginBody(), between(this.rng, 20, 400));
    call.note('begin', { verdict: 'unknown', inferred: false, final: b.kind, firstDelivered: true, answers: [b.kind] });
    if (b.effect === 'refused' && b.kind !== 'DUPLICATE_TRANSACTION') {
      call.set('absent', `begin answered ${b.kind}`);
      return;
    }
    // Hangup comes after the agent has answered or given up (its bound), as with a proxy's 7 s timeout.
    await sleep(Math.max(0, sentAt + AGENT_TIMEOUT_MS + AGENT_ABANDON_MS + 500 - Date.now()), this.run.hardStop.signal);
    for (let round = 0; round < 2; round++) {
      const e = await this.runOp('end', call.endBody(), FINISH_POLICY);
      call.note('end', e);
      if (e.verdict === 'happened' && !e.inferred) {
        if (b.effect === 'transient' && round === 0) {
          this.run.violation(
            'answers',
            `${call.label}: begin answered ${b.kind} ("did not happen"), yet its end found the call running (${call.history})`,
          );
        }
        call.set('charged', 'end acknowledged after a begin answered late', true);
        return;
      }
      if (e.verdict !== 'not-happened' || e.final !== 'NOT_FOUND') {
        call.set('unknown', `fallback end answered ${e.final}`);
        return;
      }
      const r = await this.runOp('record', call.recordBody(), FINISH_POLICY);
      call.note('record', r);
      if (r.verdict === 'happened') {
        call.set(
          'charged',
          r.inferred ? 'fallback record inferred from DUPLICATE_TRANSACTION after a lost answer' : 'recorded after end found no call',
          !r.inferred,
        );
        return;
      }
      // DUPLICATE_TRANSACTION: the late begin stood after all (it ran between the two); end it.
      if (r.verdict === 'unknown' || r.final !== 'DUPLICATE_TRANSACTION') {
        call.set('unknown', `fallback record answered ${r.final}`);
        return;
      }
    }
    call.set('unknown', 'fallback did not settle in two rounds');
  }

  /** Rolls back a running or charged call; the call's expectation follows the answer. */
  private async rollback(call: Call): Promise<void> {
    const r = await this.runOp('rollback', call.rollbackBody(), FINISH_POLICY);
    call.note('rollback', r);
    if (r.verdict === 'happened') {
      call.set('absent', r.inferred ? 'rollback inferred from NOT_FOUND after a lost answer' : 'rollback acknowledged');
      call.rolledBackOk = !r.inferred;
    } else if (r.verdict === 'unknown') {
      call.set('unknown', 'rollback: outcome unknown');
    } else if (r.final === 'NOT_FOUND') {
      if (call.firm) {
        this.run.violation(
          'answers',
          `${call.label}: rollback answered NOT_FOUND for an acknowledged ${call.expect} call (${call.history})`,
        );
        call.set('unknown', 'rollback found no call');
      } else {
        call.set('absent', 'rollback found no call (its state was inferred)');
      }
    }
    // Otherwise (TIMEOUT, UNAVAILABLE, BUSY until the client gave up): nothing changed.
  }

  private async refusalProbe(call: Call, op: 'begin' | 'record'): Promise<void> {
    const outcome = await this.runOp(op, op === 'begin' ? call.beginBody() : call.recordBody(), START_POLICY);
    call.note(op, outcome);
    if (outcome.verdict === 'happened') {
      this.run.violation('answers', `${call.label}: ${op} accepted a call that must be refused (${call.scenario}) (${call.history})`);
      call.set('unknown', 'accepted although it must be refused');
      const undo = await this.runOp('rollback', call.rollbackBody(), FINISH_POLICY);
      call.note('rollback', undo);
    } else {
      call.set(outcome.verdict === 'unknown' ? 'unknown' : 'absent', `${op} answered ${outcome.final}`);
    }
  }

  /** One operation: the same request until an answer settles it, the client gives up, or its bounds pass. */
  private async runOp(op: Op, body: Record<string, unknown>, policy: Policy): Promise<OpOutcome> {
    const answers: string[] = [];
    let priorUnknown = false;
    let priorTransient = false;
    const started = Date.now();
    const outcome = (verdict: OpOutcome['verdict'], final: string, inferred = false): OpOutcome => ({
      verdict,
      inferred,
      final,
      firstDelivered: !priorUnknown && !priorTransient,
      answers,
    });
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) bump(this.run.retries, op);
      const answer = await this.post(op, body);
      answers.push(answer.kind);
      switch (answer.effect) {
        case 'ok':
          return outcome('happened', answer.kind);
        case 'refused':
          if (priorUnknown && ALREADY[op].has(answer.kind)) return outcome('happened', answer.kind, true);
          return outcome(priorUnknown ? 'unknown' : 'not-happened', answer.kind);
        case 'bad':
          this.run.violation('answers', `${op} ${JSON.stringify(body)} answered ${answer.kind} to a valid request: ${answer.detail ?? ''}`);
          return outcome(priorUnknown ? 'unknown' : 'not-happened', answer.kind);
        case 'transient':
          if (this.rng() >= policy.retryTransient) return outcome(priorUnknown ? 'unknown' : 'not-happened', answer.kind);
          priorTransient = true;
          break;
        case 'unknown':
          priorUnknown = true;
          break;
        case 'none':
          break;
      }
      if (attempt >= policy.maxAttempts || Date.now() - started > policy.windowMs || this.run.hardStop.signal.aborted) {
        return outcome(priorUnknown ? 'unknown' : 'not-happened', answer.kind);
      }
      await sleep(Math.min(200 * 2 ** (attempt - 1), 2000) * (0.5 + this.rng()), this.run.hardStop.signal);
    }
  }

  private async authorizeFirst(call: Call): Promise<void> {
    await this.authorize(call.tag, call.caller, call.destination);
  }

  /** One authorization, counted by its answer; the answer when one came. */
  private async authorize(tag: string, caller: string, destination: string): Promise<AuthorizationReply | null> {
    bump(this.run.sent, 'authorization');
    let kind: string;
    let answer: AuthorizationReply | null = null;
    try {
      const response = await fetch(`${this.agentUrl}/v1/authorization`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ transaction_tag: tag, account_tag: caller, destination }),
        signal: AbortSignal.any([this.run.hardStop.signal, AbortSignal.timeout(CLIENT_TIMEOUT_MS)]),
      });
      answer = (await response.json().catch(() => null)) as AuthorizationReply | null;
      kind =
        response.status !== 200
          ? `HTTP_${response.status}`
          : answer?.authorized
            ? 'authorized'
            : (answer?.unauthorized_reason ?? 'unreadable');
      if (response.status !== 200) answer = null;
    } catch (err) {
      kind = fetchFailure(err).kind;
    }
    const byOp = this.run.answersByOp.get('authorization') ?? new Map<string, number>();
    this.run.answersByOp.set('authorization', byOp);
    bump(byOp, kind);
    return answer;
  }

  private async post(op: Op, body: Record<string, unknown>, timeoutMs = CLIENT_TIMEOUT_MS): Promise<Answer> {
    bump(this.run.sent, op);
    let answer: Answer;
    try {
      const response = await fetch(`${this.agentUrl}${PATHS[op]}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.any([this.run.hardStop.signal, AbortSignal.timeout(timeoutMs)]),
      });
      const text = await response.text();
      if (response.status === 200) {
        answer = parseAnswer(text);
      } else if (response.status >= 400 && response.status < 500) {
        answer = { kind: `HTTP_${response.status}`, effect: 'bad', detail: text.slice(0, 300) };
      } else {
        answer = { kind: `HTTP_${response.status}`, effect: 'unknown' };
      }
    } catch (err) {
      answer = fetchFailure(err);
    }
    bump(this.run.answers, answer.kind);
    const byOp = this.run.answersByOp.get(op) ?? new Map<string, number>();
    this.run.answersByOp.set(op, byOp);
    bump(byOp, answer.kind);
    return answer;
  }
}

function parseAnswer(text: string): Answer {
  let parsed: { ok?: unknown; reason?: unknown };
  try {
    parsed = JSON.parse(text) as { ok?: unknown; reason?: unknown };
  } catch {
    return { kind: 'BAD_BODY', effect: 'unknown', detail: text.slice(0, 200) };
  }
  if (parsed.ok === true) return { kind: 'ok', effect: 'ok' };
  if (parsed.ok === false && typeof parsed.reason === 'string') {
    // The agent could not learn or record the fate: like a lost answer, sent again to learn it.
    if (parsed.reason === 'OUTCOME_UNKNOWN') return { kind: parsed.reason, effect: 'unknown' };
    return { kind: parsed.reason, effect: TRANSIENT.has(parsed.reason) ? 'transient' : 'refused' };
  }
  return { kind: 'BAD_BODY', effect: 'unknown', detail: text.slice(0, 200) };
}

function fetchFailure(err: unknown): Answer {
  const e = err as { name?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError') return { kind: 'CLIENT_TIMEOUT', effect: 'unknown' };
  if (e.name === 'AbortError') return { kind: 'ABORTED', effect: 'unknown' };
  // Refused: the request never reached an agent, so it cannot have happened.
  if (e.cause?.code === 'ECONNREFUSED') return { kind: 'CONN_REFUSED', effect: 'none' };
  return { kind: 'CONN_ERROR', effect: 'unknown' };
}

// ============================================================================ faults

function faultLoop(run: Run, name: string, firstMs: number, everyMs: [number, number], act: (rng: Rng) => Promise<void>): Promise<void> {
  const clock = {
    seed: run.options.seed,
    phaseStart: run.phaseStart,
    endMs: run.options.seconds * 1000,
    stop: run.stopFaults.signal,
    note: (text: string) => run.note(text),
  };
  return sharedFaultLoop(clock, name, firstMs, everyMs, act);
}

/**
 * `rating audit` during the load (issue 31): every 8-12 s on a connection of its own, while workers,
 * the agent, Redis and MongoDB are killed. It must never report a difference or a call problem (the
 * call check looks again after the recovery sweep's takeover time); a run that cannot reach MongoDB is
 * counted, not a violation.
 */
async function liveAudits(run: Run, mongoUrl: string): Promise<void> {
  let mongo: Mongo | undefined;
  const rng = seededRng(run.options.seed * 7 + 3);
  try {
    while (!run.stopFaults.signal.aborted) {
      await sleep(between(rng, 8000, 12_000), run.stopFaults.signal);
      if (run.stopFaults.signal.aborted) break;
      run.liveAudits.started += 1;
      try {
        mongo ??= await withTimeout(connectMongo(mongoUrl, MONGO_DB), 15_000, 'audit connection');
        const report = await withTimeout(
          auditLedger(mongo.collections, { recheckPauseMs: TAKEOVER_MS + AGENT_TIMEOUT_MS }),
          90_000,
          'audit during the load',
        );
        run.liveAudits.finished += 1;
        run.liveAudits.differences += report.differences.length;
        run.liveAudits.calls += report.calls.length;
        for (const d of report.differences)
          run.violation(
            '1 audit (during the load)',
            `${d.account_tag}: balance off by ${d.balance_difference}, records off by ${d.records_difference}`,
          );
        for (const c of report.calls) run.violation('1 audit (during the load)', `${c.account_tag}/${c.transaction_tag}: ${c.problem}`);
      } catch (err) {
        run.liveAudits.failed += 1;
        run.note(`audit during the load could not run: ${errorText(err).split('\n')[0]}`);
      }
    }
  } finally {
    await mongo?.close().catch(() => undefined);
  }
}

function runFaults(run: Run, s: Services): Promise<unknown> {
  const phase = run.options.seconds * 1000;
  const mongoEvery = run.options.mongoEvery * 1000;
  // --mongo-every: early and often, to find restart races; otherwise the default schedule.
  const [mongoFirstMs, mongoGapMs]: [number, [number, number]] = mongoEvery
    ? [phase * 0.1, [mongoEvery, mongoEvery + 3000]]
    : [phase * 0.5, [35_000, 50_000]];
  let nextWorker = 0;
  const restart = async (proc: Proc, signal: 'SIGKILL' | 'SIGTERM', fault: string, pauseMs: number) => {
    await proc.kill(signal);
    bump(run.faults, fault);
    await sleep(pauseMs);
    await proc.ensureUp();
  };
  return Promise.all([
    // Two workers; one of them killed every 10-20 s.
    faultLoop(run, 'worker', Math.min(8000, phase * 0.1), [10_000, 20_000], (rng) =>
      restart(s.workers[nextWorker++ % s.workers.length], 'SIGKILL', 'worker SIGKILL + restart', between(rng, 200, 1500)),
    ),
    faultLoop(run, 'agent', phase * 0.22, [25_000, 40_000], (rng) =>
      restart(s.agent, 'SIGKILL', 'agent SIGKILL + restart', between(rng, 300, 1500)),
    ),
    faultLoop(run, 'redis', phase * 0.35, [30_000, 45_000], async (rng) => {
      const keep = await killRedis(run, s, rng() < 0.5);
      bump(run.faults, keep ? 'redis SIGKILL + restart, data kept (SAVE first)' : 'redis SIGKILL + restart, all data lost');
      await sleep(between(rng, 500, 2500));
      await s.redis.ensureUp();
    }),
    faultLoop(run, 'mongo', mongoFirstMs, mongoGapMs, (rng) => {
      const kill = run.options.killMongo && rng() < 0.5;
      return restart(
        s.mongo,
        kill ? 'SIGKILL' : 'SIGTERM',
        kill ? 'mongo SIGKILL + restart' : 'mongo SIGTERM + restart',
        between(rng, 500, 2000),
      );
    }),
  ]);
}

// ============================================================================ settling

interface Snapshot {
  audit: AuditReport;
  endedEntries: number;
  /** A few of them, for the report: account/caller/tag. */
  endedSample: string[];
  queued: Record<string, number>;
  lastScanStartedAt: number;
}

async function snapshot(mongo: Mongo, queues: Queues): Promise<Snapshot> {
  const audit = await auditLedger(mongo.collections);
  let endedEntries = 0;
  const endedSample: string[] = [];
  for await (const a of mongo.collections.accounts.find({}, { projection: { account_tag: 1, running_transactions: 1 } })) {
    for (const e of (a.running_transactions ?? []).filter((x) => !x.in_progress)) {
      endedEntries += 1;
      if (endedSample.length < 5) endedSample.push(`${a.account_tag}:${e.origin_account_tag}/${e.transaction_tag}`);
    }
  }
  const queued: Record<string, number> = {};
  queued.transactions = await queues.transactions.unfinished();
  const processing = await queues.processing.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused', 'waiting-children');
  queued.processing = Object.values(processing).reduce((a, b) => a + b, 0);
  const scans = await queues.maintenance.getJobs(['completed'], 0, 9, false);
  const lastScanStartedAt = Math.max(0, ...scans.map((j) => j.processedOn ?? 0));
  return { audit, endedEntries, endedSample, queued, lastScanStartedAt };
}

interface SettleResult {
  settled: boolean;
  ms: number;
  last: Snapshot | undefined;
  lastError: string | undefined;
}

/**
 * Waits (bounded) until the workers are done: no job queued or running, no record in flight, no
 * ledger marker, no ended call unprocessed, and a maintenance scan (the recovery sweep) has started
 * after the sweep's takeover delay had passed since the clients stopped.
 */
async function settle(run: Run, mongo: Mongo, queues: Queues, clientsDoneAt: number): Promise<SettleResult> {
  const started = Date.now();
  const scanAfter = clientsDoneAt + TAKEOVER_MS + 1000;
  const until = started + run.options.drainSeconds * 1000;
  let last: Snapshot | undefined;
  let lastError: string | undefined;
  let lastPrint = Date.now();
  for (;;) {
    try {
      last = await withTimeout(snapshot(mongo, queues), 20000, 'settling snapshot');
      lastError = undefined;
      const quiet =
        last.audit.records_in_flight === 0 &&
        last.audit.pending_markers === 0 &&
        last.endedEntries === 0 &&
        Object.values(last.queued).every((n) => n === 0);
      if (quiet && last.lastScanStartedAt >= scanAfter) return { settled: true, ms: Date.now() - started, last, lastError };
    } catch (err) {
      lastError = errorText(err);
    }
    if (Date.now() > until) return { settled: false, ms: Date.now() - started, last, lastError };
    if (Date.now() - lastPrint >= 10_000) {
      lastPrint = Date.now();
      process.stdout.write(
        `[${String(Math.round((Date.now() - run.startedAt) / 1000)).padStart(4)}s draining] ` +
          (last
            ? `records in flight ${last.audit.records_in_flight}, markers ${last.audit.pending_markers}, ended entries ${last.endedEntries}${last.endedSample.length ? ` (${last.endedSample.join(' ')})` : ''}, queued ${JSON.stringify(last.queued)}, last scan ${last.lastScanStartedAt ? seconds(Date.now() - last.lastScanStartedAt) + ' ago' : 'none'}`
            : `no snapshot yet${lastError ? `: ${lastError}` : ''}`) +
          '\n',
      );
    }
    await sleep(1000);
  }
}

// ============================================================================ checks

interface CheckCounts {
  charged: number;
  absent: number;
  running: number;
  unknown: number;
  unknownLeft: { running: number; recorded: number; nothing: number };
  /** Authorizations' reservations still held (not calls; they expire). */
  reservations: number;
}

interface RecordRow {
  _id: string;
  account_tag: string;
  transaction_tag: string;
  origin_account_tag?: string;
  fee: bigint;
  duration: number;
  state?: string;
}

/**
 * The checks of the issue, against the last use of every (caller, tag):
 * 1. the ledger audit finds no difference;
 * 2. an acknowledged call has exactly one record per party with the rating formula's fee, and each
 *    balance is its opening balance minus its records' fees (and within what the answers allow);
 * 3. a call refused, timed out, unavailable or rolled back left no record and no running entry;
 *    one whose end (or rollback) timed out is still running, unrecorded;
 * 4. no running entry is left for a call whose end was acknowledged, nor any ended entry at all.
 */
async function verify(run: Run, mongo: Mongo, calls: Call[], audit: AuditReport): Promise<CheckCounts> {
  for (const d of audit.differences) {
    run.violation('1 audit', `${d.account_tag}: balance off by ${d.balance_difference}, records off by ${d.records_difference}`);
  }
  for (const c of audit.calls) {
    run.violation(
      '1 audit',
      `${c.account_tag}/${c.transaction_tag}: ${c.problem}${c.record_id ? ` (record ${c.record_id})` : ''}${c.entry_id ? ` (entry ${c.entry_id})` : ''}`,
    );
  }

  const finals = new Map<string, Call>();
  for (const call of calls) finals.set(call.key, call);

  const records = (await mongo.collections.transactions
    .find({}, { projection: { _id: 1, account_tag: 1, transaction_tag: 1, origin_account_tag: 1, fee: 1, duration: 1, state: 1 } })
    .toArray()) as unknown as RecordRow[];
  const recordsOf = new Map<string, RecordRow[]>();
  for (const r of records) {
    const key = `${r.origin_account_tag ?? r.account_tag}\u0000${r.transaction_tag}`;
    const list = recordsOf.get(key) ?? [];
    list.push(r);
    recordsOf.set(key, list);
  }
  const accounts = await mongo.collections.accounts
    .find({}, { projection: { account_tag: 1, balance: 1, opening_balance: 1, running_transactions: 1 } })
    .toArray();
  const entriesOf = new Map<string, Array<{ account: string; inProgress: boolean }>>();
  let reservations = 0;
  for (const a of accounts) {
    for (const e of a.running_transactions ?? []) {
      // An authorization's reservation is no call (it expires after RESERVATION_SECONDS); counted apart.
      if (isReservation(e)) {
        reservations += 1;
        continue;
      }
      const list = entriesOf.get(e.call_id) ?? [];
      list.push({ account: a.account_tag, inProgress: e.in_progress });
      entriesOf.set(e.call_id, list);
    }
  }

  const counts: CheckCounts = {
    charged: 0,
    absent: 0,
    running: 0,
    unknown: 0,
    unknownLeft: { running: 0, recorded: 0, nothing: 0 },
    reservations,
  };
  const low = new Map<string, bigint>();
  const high = new Map<string, bigint>();
  const add = (map: Map<string, bigint>, k: string, v: bigint) => map.set(k, (map.get(k) ?? 0n) + v);
  const explain = (call: Call) => `${call.why}; ${call.history}`;

  for (const call of finals.values()) {
    const recs = recordsOf.get(call.key) ?? [];
    const entries = entriesOf.get(callId(call.caller, call.tag)) ?? [];
    const parties = partiesOf(call.caller);
    switch (call.expect) {
      case 'charged': {
        counts.charged += 1;
        for (const party of parties) {
          const fee = call.fee(party);
          add(low, party, fee);
          add(high, party, fee);
          const mine = recs.filter((r) => r.account_tag === party);
          if (mine.length !== 1) {
            run.violation(
              '2 acknowledged',
              `${call.label}: ${party} holds ${mine.length} records of the call, expected 1 with fee ${fee} (${explain(call)})`,
            );
            continue;
          }
          const [r] = mine;
          if (r.fee !== fee || r.duration !== call.secs) {
            run.violation(
              '2 acknowledged',
              `${call.label}: ${party}'s record has fee ${r.fee} and duration ${r.duration}, expected ${fee} and ${call.secs} (${explain(call)})`,
            );
          }
          if (r.state !== 'charged')
            run.violation(
              '2 acknowledged',
              `${call.label}: ${party}'s record is '${r.state ?? 'no state'}', not 'charged' (${explain(call)})`,
            );
        }
        for (const r of recs.filter((x) => !parties.includes(x.account_tag))) {
          run.violation(
            '2 acknowledged',
            `${call.label}: a record on ${r.account_tag}, which is not a party of the call (${explain(call)})`,
          );
        }
        if (entries.length > 0) {
          run.violation(
            '4 ended',
            `${call.label}: ${entries.map((e) => `${e.account}${e.inProgress ? ' (in progress)' : ' (ended)'}`).join(', ')} still hold a running entry of a call acknowledged as charged (${explain(call)})`,
          );
        }
        break;
      }
      case 'absent':
        counts.absent += 1;
        if (recs.length > 0) {
          run.violation(
            '3 nothing left',
            `${call.label}: ${recs.map((r) => `${r.account_tag} (fee ${r.fee}, ${r.state ?? 'no state'})`).join(', ')} hold a record of a call that must have left nothing (${explain(call)})`,
          );
        }
        if (entries.length > 0) {
          run.violation(
            '3 nothing left',
            `${call.label}: ${entries.map((e) => `${e.account}${e.inProgress ? ' (in progress)' : ' (ended)'}`).join(', ')} hold a running entry of a call that must have left nothing (${explain(call)})`,
          );
        }
        break;
      case 'running': {
        counts.running += 1;
        const live = entries
          .filter((e) => e.inProgress)
          .map((e) => e.account)
          .sort();
        if (recs.length === 0 && live.join() === [...parties].sort().join() && entries.length === parties.length) {
          if (call.endContradicted) {
            run.violation(
              'answers',
              `${call.label}: end answered "did not happen", then ALREADY_ENDED to the same request, and the call was left running, never charged: the ALREADY_ENDED answer was false (${explain(call)})`,
            );
          }
        } else {
          run.violation(
            '3 still running',
            `${call.label}: its end was answered only "did not happen" (TIMEOUT, UNAVAILABLE, BUSY) or a refusal, so it must still run on ${parties.join(', ')}, unrecorded; found entries [${entries.map((e) => `${e.account}${e.inProgress ? '' : ' ended'}`).join(', ')}], records [${recs.map((r) => r.account_tag).join(', ')}] (${explain(call)})`,
          );
        }
        break;
      }
      case 'unknown': {
        counts.unknown += 1;
        if (entries.length > 0) counts.unknownLeft.running += 1;
        else if (recs.length > 0) counts.unknownLeft.recorded += 1;
        else counts.unknownLeft.nothing += 1;
        for (const party of parties) add(high, party, call.fee(party));
        for (const e of entries.filter((x) => !x.inProgress)) {
          run.violation(
            '4 ended',
            `${call.label}: ${e.account} still holds an ended, unprocessed entry (outcome unknown to the client: ${explain(call)})`,
          );
        }
        break;
      }
    }
  }

  // Records and entries of calls no client made.
  for (const [key, recs] of recordsOf) {
    if (!finals.has(key))
      run.violation(
        '3 nothing left',
        `record of an unknown call ${key.replace('\u0000', '/')} on ${recs.map((r) => r.account_tag).join(', ')}`,
      );
  }
  const knownIds = new Set([...finals.values()].map((c) => callId(c.caller, c.tag)));
  for (const [id, entries] of entriesOf) {
    if (!knownIds.has(id))
      run.violation('3 nothing left', `running entry of an unknown call ${id} on ${entries.map((e) => e.account).join(', ')}`);
  }

  // Balances: opening - fees of the account's records; and within what the answers allow.
  for (const a of accounts) {
    const opening = a.opening_balance ?? seedOf.get(a.account_tag)?.balance ?? 0n;
    const fees = records.filter((r) => r.account_tag === a.account_tag && r.state === 'charged').reduce((s, r) => s + r.fee, 0n);
    if (a.balance !== opening - fees) {
      run.violation(
        '2 acknowledged',
        `${a.account_tag}: balance ${a.balance}, but opening ${opening} - fees of its charged records ${fees} = ${opening - fees}`,
      );
    }
    // Failover calls are cut at a grant that must hold on the dearer carrier, for every party.
    const failoverParty = ['f1', 'f2', 'fp'].includes(a.account_tag);
    if (failoverParty && a.balance < 0n) {
      run.violation(
        '5 no overdraft',
        `${a.account_tag}: prepaid balance ${a.balance} after failover calls cut at their grant (one at a time)`,
      );
    }
    const debited = opening - a.balance;
    const min = low.get(a.account_tag) ?? 0n;
    const max = high.get(a.account_tag) ?? 0n;
    if (debited < min || debited > max) {
      run.violation(
        '2 acknowledged',
        `${a.account_tag}: debited ${debited} in all, but the acknowledged calls cost ${min}` +
          (max > min ? ` (up to ${max} with the calls of unknown outcome)` : ''),
      );
    }
  }
  return counts;
}

// ============================================================================ report

function printReport(
  run: Run,
  calls: Call[],
  counts: CheckCounts | undefined,
  audit: AuditReport | undefined,
  settled: SettleResult | undefined,
  procs: Proc[],
): void {
  const out: string[] = [];
  const line = (text = '') => out.push(text);
  const list = (map: Map<string, number>, order: (a: string, b: string) => number = (a, b) => a.localeCompare(b)) =>
    [...map]
      .sort(([a], [b]) => order(a, b))
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none';
  const rank = (k: string) =>
    k === 'ok'
      ? 0
      : TRANSIENT.has(k)
        ? 2
        : ['CONN_REFUSED', 'CONN_ERROR', 'CLIENT_TIMEOUT', 'ABORTED', 'BAD_BODY'].includes(k) || /^HTTP_/.test(k)
          ? 3
          : 1;
  const answerOrder = (a: string, b: string) => rank(a) - rank(b) || a.localeCompare(b);

  line();
  line('================ chaos run report ================');
  line(
    `options: --seconds ${run.options.seconds} --clients ${run.options.clients} --seed ${run.options.seed}${run.options.killMongo ? ' --kill-mongo' : ''}; agent timeout ${AGENT_TIMEOUT_MS} ms, job lock ${JOB_LOCK_MS} ms, scan every ${LONG_CALL_SCAN_SECONDS} s`,
  );
  line(`wall time: ${seconds(Date.now() - run.startedAt)}`);
  line();
  line(
    `requests sent (retries): ${(['begin', 'end', 'record', 'rollback'] as const).map((op) => `${op} ${run.sent.get(op) ?? 0} (${run.retries.get(op) ?? 0})`).join(', ')}, authorization ${run.sent.get('authorization') ?? 0}; total ${total(run.sent)}`,
  );
  line(`answers: ${list(run.answers, answerOrder)}`);
  for (const op of ['begin', 'end', 'record', 'rollback'])
    line(`  ${op.padEnd(8)} ${list(run.answersByOp.get(op) ?? new Map(), answerOrder)}`);
  line(`  authorization (before half the begins; not counted in answers above) ${list(run.answersByOp.get('authorization') ?? new Map())}`);
  line('  (CONN_REFUSED: never reached an agent; CONN_ERROR, CLIENT_TIMEOUT, HTTP_5xx, ABORTED: no answer, outcome unknown)');
  const scenarios = new Map<string, number>();
  for (const c of calls) bump(scenarios, c.scenario);
  const ends = new Map<string, number>();
  for (const c of calls) bump(ends, c.expect);
  line(`calls: ${calls.length} (${list(scenarios)})`);
  line(
    `  as the clients left them: ${list(ends)}; tag reuses after an acknowledged rollback: ${calls.filter((c) => c.incarnation > 1).length}`,
  );
  line();
  line(`faults injected: ${list(run.faults)}`);
  for (const p of procs) {
    const levels = p.levels.size ? `; log lines ${list(p.levels)}` : '';
    line(
      `  ${p.name.padEnd(8)} started ${p.generation} times, start failures ${p.startFailures}, exits by itself ${p.unexpectedExits.length}${p.unexpectedExits.length ? ` (${p.unexpectedExits.join(', ')})` : ''}${levels}`,
    );
  }
  line();
  if (settled) {
    const s = settled.last;
    line(
      `settling: ${settled.settled ? 'done' : 'NOT done'} in ${seconds(settled.ms)}` +
        (s
          ? `: records in flight ${s.audit.records_in_flight}, ledger markers ${s.audit.pending_markers}, ended entries ${s.endedEntries}, queued jobs ${JSON.stringify(s.queued)}, last maintenance scan started ${s.lastScanStartedAt ? seconds(Date.now() - s.lastScanStartedAt) + ' ago' : 'never'}`
          : '') +
        (settled.lastError ? `; last error: ${settled.lastError}` : ''),
    );
  }
  const la = run.liveAudits;
  line(
    `audits during the load: ${la.started} started, ${la.finished} finished (${la.failed} could not reach MongoDB): ${la.differences} differences, ${la.calls} call problems`,
  );
  if (audit)
    line(
      `audit: ${audit.accounts} accounts, ${audit.ledger_entries} ledger entries, ${audit.records} records, ${audit.pending_markers} markers, ${audit.records_in_flight} in flight, ${audit.differences.length} differences, ${audit.calls.length} call problems`,
    );
  if (counts) {
    line(
      `checked calls: ${counts.charged} charged (check 2, 4), ${counts.absent} leaving nothing (check 3), ${counts.running} still running (end timed out), ${counts.unknown} of unknown outcome (audit only: ${counts.unknownLeft.running} left running, ${counts.unknownLeft.recorded} recorded, ${counts.unknownLeft.nothing} left nothing); reservations still held ${counts.reservations}`,
    );
  }
  if (run.notes.length) {
    line();
    line(`notes (${run.notes.length}):`);
    for (const n of run.notes.slice(0, 40)) line(`  ${n}`);
    if (run.notes.length > 40) line(`  ... ${run.notes.length - 40} more`);
  }
  line();
  const byCheck = new Map<string, number>();
  for (const v of run.violations) bump(byCheck, v.check);
  line(`violations: ${run.violations.length}${run.violations.length ? ` (${list(byCheck)})` : ''}`);
  const shown = 500;
  run.violations.slice(0, shown).forEach((v, i) => line(`  ${String(i + 1).padStart(3)}. [${v.check}] ${v.text}`));
  if (run.violations.length > shown) line(`  ... ${run.violations.length - shown} more`);
  line();
  line(run.violations.length === 0 ? 'RESULT: PASS' : `RESULT: FAIL (${run.violations.length} violations)`);
  process.stdout.write(`${out.join('\n')}\n`);
}

// ============================================================================ main

async function chaos(run: Run): Promise<number> {
  const o = run.options;
  process.stdout.write(
    `chaos run: ${o.seconds} s of faults, ${o.clients} clients, seed ${o.seed}${o.killMongo ? ', mongo SIGKILL too' : ''}${o.mongoEvery ? `, mongo restarted every ${o.mongoEvery}-${o.mongoEvery + 3} s` : ''}; temp dir ${run.tmp}\n`,
  );
  const s = await defineServices(run);
  await Promise.all([s.redis.ensureUp(), s.mongo.ensureUp()]);
  const seedClient = await connectMongo(s.mongoUrl, MONGO_DB);
  try {
    await seedData(seedClient);
  } finally {
    await seedClient.close();
  }
  // Workers load the rating data at start: started after seeding, no announcement is needed.
  await Promise.all([s.agent.ensureUp(), ...s.workers.map((w) => w.ensureUp())]);
  process.stdout.write(`services up (redis ${s.redisUrl}, mongo ${s.mongoUrl}, agent ${s.agentUrl}); faults for ${o.seconds} s\n`);

  const calls: Call[] = [];
  run.phase = 'faults';
  run.phaseStart = Date.now();
  const ticker = setInterval(() => run.progress(), 10_000);
  try {
    const clients = Array.from({ length: o.clients }, (_, i) => new Client(run, i + 1, s.agentUrl, calls).loop());
    const faults = runFaults(run, s);
    const audits = liveAudits(run, s.mongoUrl);
    await sleep(o.seconds * 1000, run.hardStop.signal);
    run.stopFaults.abort();
    run.phase = 'settling';
    await faults;
    await audits;
    // Everything up again before the clients finish their calls.
    await withTimeout(Promise.all(run.procs.map((p) => p.ensureUp())), 120_000, 'restarting every process after the faults');
    const clientsDone = Promise.all(clients);
    const inTime = await Promise.race([clientsDone.then(() => true), sleep(o.settleSeconds * 1000).then(() => false)]);
    if (!inTime) {
      run.note(`clients still busy after ${o.settleSeconds} s: their requests were abandoned (those calls count as unknown)`);
      run.hardStop.abort();
      await withTimeout(clientsDone, 15_000, 'clients stopping').catch((err) => run.note(errorText(err)));
    }
  } finally {
    clearInterval(ticker);
  }
  const clientsDoneAt = Date.now();
  run.progress();

  run.phase = 'draining';
  run.harnessMongo = await connectMongo(s.mongoUrl, MONGO_DB);
  run.harnessRedis = new Redis(s.redisUrl, { maxRetriesPerRequest: 2, connectTimeout: 2000 });
  run.harnessRedis.on('error', () => undefined);
  run.harnessQueues = createQueues(run.harnessRedis, QUEUE_PREFIX);
  const settled = await settle(run, run.harnessMongo, run.harnessQueues, clientsDoneAt);
  const audit = await withTimeout(auditLedger(run.harnessMongo.collections), 60_000, 'final audit');
  if (!settled.settled) {
    const s2 = settled.last;
    run.violation(
      'settling',
      `the workers were not done after ${o.drainSeconds} s` +
        (s2
          ? `: records in flight ${s2.audit.records_in_flight}, ledger markers ${s2.audit.pending_markers}, ended entries ${s2.endedEntries}${s2.endedSample.length ? ` (${s2.endedSample.join(' ')})` : ''}, queued ${JSON.stringify(s2.queued)}, maintenance scan after the takeover delay: ${s2.lastScanStartedAt >= clientsDoneAt + TAKEOVER_MS ? 'yes' : 'no'}`
          : `: ${settled.lastError ?? 'no snapshot'}`),
    );
  }
  if (audit.pending_markers > 0 || audit.records_in_flight > 0) {
    run.violation('1 audit', `not settled: ${audit.pending_markers} ledger markers, ${audit.records_in_flight} records in flight`);
  }
  const counts = await withTimeout(verify(run, run.harnessMongo, calls, audit), 60_000, 'checks');
  run.phase = 'done';
  printReport(run, calls, counts, audit, settled, run.procs);
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
    process.stderr.write(`\n${signal}: stopping every process of the chaos run\n`);
    void run.cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', () => interrupted('SIGINT'));
  process.once('SIGTERM', () => interrupted('SIGTERM'));
  // Every wait is bounded; this is the bound of the whole run, should one of them not be.
  const limitMs = (options.seconds + options.settleSeconds + options.drainSeconds + 420) * 1000;
  const watchdog = setTimeout(() => {
    process.stderr.write(`watchdog: the chaos run took longer than ${seconds(limitMs)}; stopping\n`);
    void run.cleanup().finally(() => process.exit(2));
  }, limitMs);
  let code: number;
  try {
    code = await chaos(run);
  } catch (err) {
    if (!run.interrupted) {
      process.stderr.write(`chaos run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      if (run.notes.length) process.stderr.write(`notes:\n  ${run.notes.join('\n  ')}\n`);
    }
    code = 2;
  }
  clearTimeout(watchdog);
  await withTimeout(run.cleanup(), 60_000, 'cleanup').catch((err) => process.stderr.write(`${errorText(err)}\n`));
  process.exit(run.interrupted ? 130 : code);
}

void main();
