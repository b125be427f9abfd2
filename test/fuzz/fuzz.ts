/**
 * The fuzz test of issue 10: malformed requests against the management API (GraphQL), the agent's
 * GraphQL endpoint and its REST mirror. Starts the service as `npm start` does (API, agent and workers
 * in one process, with its own redis-server and MongoDB-wire server on free ports) in a temporary
 * directory, seeds it through the API and the agent, snapshots every collection, then sends requests
 * made by breaking valid ones (requests.ts, mutators.ts) and checks every answer (check.ts): no hang,
 * no 5xx, the documented error shape and code, refused when it must be. At the end no collection may
 * differ from the snapshot. Then each valid request is sent once unchanged (the control run: the table
 * is valid, so its mutations test something). See test/fuzz/README.md.
 *
 *   npm run test:fuzz -- [--seconds 75] [--seed N] [--concurrency 8] [--case N] [--keep]
 *
 * Exit status: 0 no violation, 1 violations found, 2 the run could not be carried out, 130 interrupted.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BSON, Db, MongoClient } from 'mongodb';
import { sleep } from '../../src/shared/infra/services/process-tools';
import { ServiceProcess } from '../support/service-process';
import { Answer, answerLabel, check, Finding } from './check';
import { Case, encode, makeCase, short, Tokens, uuidFrom } from './mutators';
import { seededRng } from '../support/rng';
import { jsonOf } from '../support/http-json';
import {
  Base,
  requestTable,
  SEED_ACCOUNTS,
  SEED_AGENT_CALLS,
  SEED_CARRIERS,
  SEED_PRICELISTS,
  SEED_RATES,
  SeedIds,
  Surface,
  SURFACES,
} from './requests';

const ROOT = path.resolve(__dirname, '..', '..');
/** A request without an answer by then hangs (the agent answers within AGENT_TIMEOUT_MS, 5 s). */
const REQUEST_TIMEOUT_MS = 15_000;

// ============================================================================ options

interface Options {
  seconds: number;
  seed: number;
  concurrency: number;
  /** Send only this case (and show it in full). */
  caseIndex: number | undefined;
  keep: boolean;
}

const USAGE = `usage: npm run test:fuzz -- [options]
  --seconds N       how long to send malformed requests (default 75; the whole run takes about 40 s more)
  --seed N          seed of the generated requests (default: random, printed)
  --concurrency N   requests in flight (default 8)
  --case N          send only case N of the seed, showing the request, the answer and any state change
  --keep            keep the temporary directory (service.log, the data)
`;

class UsageError extends Error {}

function parseOptions(argv: string[]): Options {
  const options: Options = { seconds: 75, seed: Math.floor(Math.random() * 1_000_000), concurrency: 8, caseIndex: undefined, keep: false };
  const args = argv.flatMap((a) =>
    a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a],
  );
  for (let i = 0; i < args.length; i++) {
    const name = args[i];
    const int = (min: number, max: number): number => {
      const raw = args[++i];
      if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max)
        throw new UsageError(`${name} needs an integer from ${min} to ${max}`);
      return Number(raw);
    };
    if (name === '--seconds') options.seconds = int(1, 3600);
    else if (name === '--seed') options.seed = int(0, 2 ** 31);
    else if (name === '--concurrency') options.concurrency = int(1, 64);
    else if (name === '--case') options.caseIndex = int(0, 10_000_000);
    else if (name === '--keep') options.keep = true;
    else if (name === '--help' || name === '-h') {
      process.stdout.write(USAGE);
      process.exit(0);
    } else throw new UsageError(`unknown option ${name}`);
  }
  return options;
}

// ============================================================================ the service

/** The service as `npm start` runs it (test/support/service-process.ts), plus the error lines of its log. */
class Service extends ServiceProcess {
  /** Error and fatal lines of its log, by message. */
  readonly errors = new Map<string, number>();

  constructor(private readonly dir: string) {
    super();
  }

  async begin(tokens: Tokens): Promise<void> {
    await this.start({
      dir: this.dir,
      logName: 'service',
      env: { RATING_TOKENS: `fuzz:read+write+agent:${tokens.all},fuzz-reader:read:${tokens.reader}` },
      onLine: (line) => {
        const level = /"level":(\d+)/.exec(line)?.[1];
        if (level === '50' || level === '60') {
          const msg = /"msg":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? line.slice(0, 120);
          this.errors.set(msg, (this.errors.get(msg) ?? 0) + 1);
        }
      },
    });
    if (!this.mongoUrl) throw new Error('the service did not log the URL of its MongoDB-wire server');
  }

  urlOf(surface: Surface): string {
    return surface === 'api' ? this.apiUrl : this.agentUrl;
  }
}

// ============================================================================ HTTP

async function send(baseUrl: string, req: Case['request']): Promise<Answer> {
  const started = Date.now();
  try {
    // Without a content-type header the body must not be a string (fetch would add text/plain).
    const body = req.body === undefined ? undefined : req.headers['content-type'] === undefined ? Buffer.from(req.body) : req.body;
    const response = await fetch(`${baseUrl}${req.path}`, {
      method: req.method,
      headers: req.headers,
      body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    return { status: response.status, text, json: jsonOf(text), ms: Date.now() - started };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const failure = e.name === 'TimeoutError' || e.name === 'AbortError' ? 'timeout' : `connection: ${e.cause?.code ?? e.message}`;
    return { status: 0, text: '', ms: Date.now() - started, failure };
  }
}

/** A GraphQL request of the seeding, which must succeed. */
async function seedCall(url: string, token: string, query: string, variables: Record<string, unknown>): Promise<void> {
  const a = await send(url, {
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const errors = (a.json as { errors?: unknown[] } | undefined)?.errors;
  if (a.status !== 200 || errors?.length) throw new Error(`seeding failed: ${short(query, 120)} → ${a.status} ${short(a.text, 400)}`);
}

const SEED_TYPES: Record<string, string> = {
  id: 'ID',
  carrier_tag: 'String',
  host: 'String',
  port: 'Int',
  protocol: 'CarrierProtocol',
  pricelist_tag: 'String',
  name: 'String',
  currency: 'PricelistCurrency',
  prefix: 'String',
  connect_fee: 'Int',
  rate: 'Int',
  rate_increment: 'Int',
  interval_start: 'Int',
  description: 'String',
  account_tag: 'String',
  type: 'AccountType',
  balance: 'BigInt',
  max_concurrent_transactions: 'Int',
  notification_email: 'String',
  notification_mobile: 'String',
  carrier_tags: '[String!]',
  customer_tag: 'String',
  linked_accounts: '[String!]',
  pricelist_tags: '[String!]',
  tags: '[String!]',
  balance_alert_threshold: 'BigInt',
};

/** The dataset, written the way a user would: through the management API, then calls through the agent. */
async function seed(service: Service, tokens: Tokens, ids: SeedIds): Promise<void> {
  const create = (field: string, args: Record<string, unknown>) => {
    const names = Object.keys(args);
    const query = `mutation(${names.map((n) => `$${n}: ${SEED_TYPES[n]}`).join(', ')}) { ${field}(${names.map((n) => `${n}: $${n}`).join(', ')}) { __typename } }`;
    return seedCall(service.apiUrl, tokens.all, query, args);
  };
  for (const c of [...SEED_CARRIERS, { carrier_tag: 'gw4', host: '10.0.0.4', port: 5060, protocol: 'UDP', id: ids.renameCarrier }])
    await create('createCarrier', c);
  for (const p of SEED_PRICELISTS) await create('createPricelist', p);
  for (const r of [
    ...SEED_RATES,
    {
      pricelist_tag: 'retail',
      carrier_tag: 'gw2',
      prefix: '49',
      connect_fee: 0,
      rate: 30,
      rate_increment: 60,
      interval_start: 0,
      id: ids.deleteRate,
    },
  ]) {
    await create('createPricelistRate', r);
  }
  for (const a of SEED_ACCOUNTS) await create('createAccount', a);
  for (const [route, body] of SEED_AGENT_CALLS) {
    const a = await send(service.agentUrl, {
      method: 'POST',
      path: route,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.all}` },
      body: JSON.stringify(body),
    });
    if (a.status !== 200 || (a.json as { ok?: boolean } | undefined)?.ok !== true)
      throw new Error(`seeding failed: ${route} ${JSON.stringify(body)} → ${a.status} ${short(a.text, 300)}`);
  }
}

// ============================================================================ state

/** Every document of every collection, as canonical extended JSON by _id. */
type Snapshot = Map<string, Map<string, string>>;

async function snapshot(db: Db): Promise<Snapshot> {
  const result: Snapshot = new Map();
  const collections = await db.listCollections({}, { nameOnly: true }).toArray();
  for (const { name } of collections.sort((a, b) => a.name.localeCompare(b.name))) {
    if (name.startsWith('system.')) continue;
    const docs = new Map<string, string>();
    for (const doc of await db.collection(name).find({}).toArray())
      docs.set(BSON.EJSON.stringify(doc._id), BSON.EJSON.stringify(doc, { relaxed: false }));
    result.set(name, docs);
  }
  return result;
}

/** One line per added, removed or changed document: which, and what changed. */
function diff(before: Snapshot, after: Snapshot): string[] {
  const lines: string[] = [];
  const label = (json: string) => {
    const doc = BSON.EJSON.parse(json, { relaxed: true }) as Record<string, unknown>;
    const keys = ['account_tag', 'carrier_tag', 'pricelist_tag', 'transaction_tag', 'prefix', 'op', 'state'].filter(
      (k) => doc[k] !== undefined,
    );
    return keys.length
      ? keys.map((k) => `${k}=${short(JSON.stringify(doc[k]), 60)}`).join(' ')
      : `_id=${short(JSON.stringify(doc._id), 60)}`;
  };
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const b = before.get(name) ?? new Map<string, string>();
    const a = after.get(name) ?? new Map<string, string>();
    for (const [id, doc] of a) {
      const old = b.get(id);
      if (old === undefined) lines.push(`${name}: added ${label(doc)}: ${short(doc, 300)}`);
      else if (old !== doc) {
        const o = JSON.parse(old) as Record<string, unknown>;
        const n = JSON.parse(doc) as Record<string, unknown>;
        const changed = [...new Set([...Object.keys(o), ...Object.keys(n)])].filter((k) => JSON.stringify(o[k]) !== JSON.stringify(n[k]));
        lines.push(
          `${name}: changed ${label(doc)}: ${changed.map((k) => `${k} ${short(JSON.stringify(o[k] ?? null), 80)} → ${short(JSON.stringify(n[k] ?? null), 80)}`).join('; ')}`,
        );
      }
    }
    for (const [id, doc] of b) if (!a.has(id)) lines.push(`${name}: removed ${label(doc)}`);
  }
  return lines;
}

/** Waits until two snapshots a second apart agree (the workers have finished), at most `maxMs`. */
async function settled(db: Db, maxMs: number): Promise<Snapshot> {
  const until = Date.now() + maxMs;
  let last = await snapshot(db);
  for (;;) {
    await sleep(1000);
    const next = await snapshot(db);
    if (diff(last, next).length === 0 || Date.now() > until) return next;
    last = next;
  }
}

// ============================================================================ the run

interface Violation {
  cause: string;
  surface: Surface | 'state' | 'control';
  mutator: string;
  /** What the mutator did (the field and variant), for grouping. */
  detail: string;
  text: string;
}

class Run {
  readonly startedAt = Date.now();
  readonly sent = new Map<Surface, number>(SURFACES.map((s) => [s, 0]));
  readonly answers = new Map<Surface, Map<string, number>>(SURFACES.map((s) => [s, new Map()]));
  readonly expectations = new Map<string, number>();
  readonly violations: Violation[] = [];
  readonly notes: string[] = [];
  slowest: { ms: number; text: string } = { ms: 0, text: '' };
  stateLines: string[] = [];
  controls = { passed: 0, total: 0 };

  constructor(
    readonly options: Options,
    readonly codes: ReadonlySet<string>,
    readonly tokens: Tokens,
  ) {}

  get requests(): number {
    return [...this.sent.values()].reduce((a, b) => a + b, 0);
  }

  record(c: Case, a: Answer): Finding[] {
    const surface = c.base.surface;
    this.sent.set(surface, this.sent.get(surface)! + 1);
    const answers = this.answers.get(surface)!;
    const label = answerLabel(c, a);
    answers.set(label, (answers.get(label) ?? 0) + 1);
    this.expectations.set(c.expect, (this.expectations.get(c.expect) ?? 0) + 1);
    const shown = `#${c.index} ${surface} ${c.base.name} [${c.mutator}: ${c.detail}] ${c.shown}`;
    if (a.ms > this.slowest.ms) this.slowest = { ms: a.ms, text: shown };
    const findings = check(c, a, this.codes, REQUEST_TIMEOUT_MS);
    for (const f of findings) {
      this.violations.push({
        cause: f.cause,
        surface,
        mutator: c.mutator,
        detail: `${c.base.name} ${c.detail}`,
        text: `${shown}\n          → ${a.failure ?? `${a.status} ${short(a.text, 240)}`}${f.note ? ` (${f.note})` : ''}`,
      });
    }
    return findings;
  }

  progress(): void {
    const s = (Date.now() - this.startedAt) / 1000;
    process.stdout.write(
      `[${s.toFixed(0).padStart(4)}s] requests ${this.requests} (${SURFACES.map((x) => `${x} ${this.sent.get(x)}`).join(', ')}), violations ${this.violations.length}\n`,
    );
  }
}

/** Lets most requests run together and some alone (mutators.ts: exclusive cases). */
class Gate {
  private active = 0;
  private solo: Promise<void> | null = null;
  private drained: (() => void) | null = null;

  async shared<T>(fn: () => Promise<T>): Promise<T> {
    while (this.solo) await this.solo;
    this.active += 1;
    try {
      return await fn();
    } finally {
      this.active -= 1;
      if (this.active === 0) this.drained?.();
    }
  }

  async alone<T>(fn: () => Promise<T>): Promise<T> {
    while (this.solo) await this.solo;
    let release!: () => void;
    this.solo = new Promise((resolve) => (release = resolve));
    try {
      if (this.active > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = null;
      return await fn();
    } finally {
      this.solo = null;
      release();
    }
  }
}

/** After a slow request: waits until both servers answer a trivial query again (at most a minute). */
async function recovered(run: Run, service: Service): Promise<void> {
  const started = Date.now();
  for (const surface of ['api', 'agent-gql'] as const) {
    while (Date.now() - started < 60_000) {
      const a = await send(
        service.urlOf(surface),
        encode(
          { surface, name: 'version', op: 'query', field: 'version', selection: '', path: '/graphql', args: {}, fields: [] },
          run.tokens,
        ),
      );
      if (a.status === 200) break;
    }
  }
  run.notes.push(`the service answered a trivial query again ${((Date.now() - started) / 1000).toFixed(1)} s after that request`);
}

async function fuzz(run: Run, service: Service, table: Base[]): Promise<void> {
  const { seed, seconds, concurrency } = run.options;
  const gate = new Gate();
  const stopAt = Date.now() + seconds * 1000;
  let next = 0;
  const ticker = setInterval(() => run.progress(), 10_000);
  const worker = async () => {
    while (Date.now() < stopAt) {
      const c = makeCase(seed, next++, table, run.tokens);
      const url = service.urlOf(c.base.surface);
      if (!c.exclusive) {
        run.record(c, await gate.shared(() => send(url, c.request)));
        continue;
      }
      await gate.alone(async () => {
        const a = await send(url, c.request);
        run.record(c, a);
        if (a.failure || a.ms > 5000) {
          run.notes.push(`#${c.index} ${c.base.surface} [${c.mutator}: ${c.detail}] took ${a.failure ?? `${(a.ms / 1000).toFixed(1)} s`}`);
          await recovered(run, service);
        }
      });
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    clearInterval(ticker);
  }
}

/** `--case N`: that case alone, in full. */
async function oneCase(run: Run, service: Service, table: Base[], index: number): Promise<void> {
  const c = makeCase(run.options.seed, index, table, run.tokens);
  const a = await send(service.urlOf(c.base.surface), c.request);
  const findings = run.record(c, a);
  const out = [
    `case #${index} of seed ${run.options.seed}: ${c.base.surface} ${c.base.name}, mutator ${c.mutator}: ${c.detail}; expected: ${c.expect}`,
    `request: ${c.request.method} ${service.urlOf(c.base.surface)}${short(c.request.path, 3000)}`,
    `  headers: ${JSON.stringify({ ...c.request.headers, authorization: c.request.headers.authorization ? '(set)' : undefined })}`,
    `  body: ${short(c.request.body ?? '', 4000)}`,
    `answer (${a.ms} ms): ${a.failure ?? `${a.status} ${short(a.text, 4000)}`}`,
    `findings: ${findings.length ? findings.map((f) => f.cause + (f.note ? ` (${f.note})` : '')).join('; ') : 'none'}`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

/** Each valid request of the table, unchanged, in order: each must succeed (or the table tests nothing). */
async function controlRun(run: Run, service: Service, table: Base[]): Promise<void> {
  for (const base of table) {
    const a = await send(service.urlOf(base.surface), encode(base, run.tokens));
    const json = a.json as Record<string, unknown> | undefined;
    const result =
      base.surface === 'agent-rest'
        ? base.name === 'recordTransactions'
          ? json?.results
          : json
        : (json?.data as Record<string, unknown> | undefined)?.[base.field];
    const items = Array.isArray(result) && base.name === 'recordTransactions' ? result : [result];
    const ok =
      a.status === 200 &&
      !json?.errors &&
      result !== null &&
      result !== undefined &&
      items.every((r) => typeof r !== 'object' || r === null || Array.isArray(r) || (r as { ok?: boolean }).ok !== false) &&
      (base.name !== 'authorization' || (result as { authorized?: boolean }).authorized === true);
    run.controls.total += 1;
    if (ok) run.controls.passed += 1;
    // After a state change a failure may be its consequence (a tag taken, a call ended): only shown.
    else if (run.stateLines.length > 0)
      run.notes.push(
        `control ${base.surface} ${base.name} failed after the state change: ${a.failure ?? `${a.status} ${short(a.text, 160)}`}`,
      );
    else
      run.violations.push({
        cause: 'control request failed',
        surface: 'control',
        mutator: base.name,
        detail: base.surface,
        text: `${base.surface} ${base.name}: ${short(encode(base, run.tokens).body ?? '', 240)}\n          → ${a.failure ?? `${a.status} ${short(a.text, 300)}`}`,
      });
  }
}

// ============================================================================ report

function report(run: Run): void {
  const out: string[] = [];
  const line = (text = '') => out.push(text);
  const list = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none';
  const o = run.options;
  line();
  line('================ fuzz report ================');
  line(
    `seed ${o.seed}, ${o.caseIndex === undefined ? `${o.seconds} s of requests, ${o.concurrency} in flight` : `case #${o.caseIndex} only`}; wall time ${((Date.now() - run.startedAt) / 1000).toFixed(1)} s`,
  );
  line(`requests: ${run.requests} (${SURFACES.map((s) => `${s} ${run.sent.get(s)}`).join(', ')}); expected ${list(run.expectations)}`);
  line('answers (HTTP status and error codes, or the result):');
  for (const s of SURFACES) line(`  ${s.padEnd(10)} ${list(run.answers.get(s)!)}`);
  if (run.slowest.ms > 0) line(`slowest answer: ${(run.slowest.ms / 1000).toFixed(1)} s, ${short(run.slowest.text, 300)}`);
  for (const n of run.notes) line(`note: ${n}`);
  line(`state: ${run.stateLines.length === 0 ? 'no collection changed' : `${run.stateLines.length} documents differ from the snapshot`}`);
  if (run.controls.total > 0)
    line(
      `control run (each valid request of the table once, after the state check): ${run.controls.passed} of ${run.controls.total} succeeded`,
    );

  const byCause = new Map<string, Violation[]>();
  for (const v of run.violations) byCause.set(v.cause, [...(byCause.get(v.cause) ?? []), v]);
  line();
  line(`violations: ${run.violations.length}${byCause.size ? ', by cause:' : ''}`);
  for (const [cause, vs] of [...byCause].sort((a, b) => b[1].length - a[1].length)) {
    const surfaces = new Map<string, number>();
    for (const v of vs) surfaces.set(v.surface, (surfaces.get(v.surface) ?? 0) + 1);
    line(`  ${cause}: ${vs.length} (${list(surfaces)})`);
    const byMutator = new Map<string, Violation[]>();
    for (const v of vs) byMutator.set(v.mutator, [...(byMutator.get(v.mutator) ?? []), v]);
    for (const [mutator, ms] of [...byMutator].sort((a, b) => b[1].length - a[1].length)) {
      // Variants with numbers folded (`N levels`), most frequent first.
      const variants = new Map<string, number>();
      for (const v of ms) {
        const key = v.detail.replace(/ \(inline literal\)$/, '').replace(/\b\d+\b/g, 'N');
        variants.set(key, (variants.get(key) ?? 0) + 1);
      }
      const top = [...variants].sort((a, b) => b[1] - a[1]);
      line(
        `    ${mutator} ×${ms.length}: ${top
          .slice(0, 8)
          .map(([k, n]) => `${short(k, 80)} ×${n}`)
          .join('; ')}${top.length > 8 ? `; ... ${top.length - 8} more variants` : ''}`,
      );
      const shown = cause === 'state changed' ? 10 : 2;
      for (const v of ms.slice(0, shown)) line(`      ${v.text}`);
      if (ms.length > shown && cause === 'state changed') line(`      ... ${ms.length - shown} more`);
    }
  }
  line();
  line(`fuzz: ${run.requests} requests, ${run.violations.length} violations`);
  process.stdout.write(`${out.join('\n')}\n`);
}

/** The error codes docs/API.md documents (its "Errors" table). */
function documentedCodes(): Set<string> {
  const api = readFileSync(path.join(ROOT, 'docs', 'API.md'), 'utf8');
  const section = api.split(/^## Errors$/m)[1]?.split(/^## /m)[0] ?? '';
  const codes = new Set<string>();
  for (const row of section.matchAll(/^\|([^|\n]*)\|/gm)) for (const code of row[1].matchAll(/`([A-Z][A-Z_]+)`/g)) codes.add(code[1]);
  if (codes.size === 0) throw new Error('docs/API.md: no error codes found in its "Errors" table');
  return codes;
}

async function main(): Promise<void> {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'rating-fuzz-'));
  mkdirSync(path.join(tmp, 'data'));
  const tokens: Tokens = { all: randomBytes(24).toString('hex'), reader: randomBytes(24).toString('hex') };
  const service = new Service(tmp);
  let client: MongoClient | undefined;
  const cleanup = async () => {
    await client?.close().catch(() => undefined);
    await service.stop();
    if (options.keep) process.stdout.write(`kept ${tmp} (service.log, data/)\n`);
    else rmSync(tmp, { recursive: true, force: true });
  };
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      process.stderr.write(`\n${signal}: stopping the service\n`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  const watchdog = setTimeout(
    () => {
      process.stderr.write('watchdog: the fuzz run took far longer than it should; stopping\n');
      void cleanup().finally(() => process.exit(2));
    },
    (options.seconds + 420) * 1000,
  );

  let code = 2;
  try {
    const run = new Run(options, documentedCodes(), tokens);
    const idRng = seededRng(options.seed ^ 0x5eed);
    const ids: SeedIds = { renameCarrier: uuidFrom(idRng), deleteRate: uuidFrom(idRng) };
    const table = requestTable(ids);
    process.stdout.write(
      `fuzz run: seed ${options.seed}, ${options.caseIndex === undefined ? `${options.seconds} s` : `case #${options.caseIndex}`}; temp dir ${tmp}\n`,
    );
    await service.begin(tokens);
    client = new MongoClient(service.mongoUrl, { serverSelectionTimeoutMS: 10_000 });
    const db = client.db('rating');
    await seed(service, tokens, ids);
    const before = await settled(db, 30_000);
    process.stdout.write(
      `service up (api ${service.apiUrl}, agent ${service.agentUrl}, mongo ${service.mongoUrl}); seeded: ${[...before].map(([n, d]) => `${n} ${d.size}`).join(', ')}\n`,
    );

    if (options.caseIndex === undefined) await fuzz(run, service, table);
    else await oneCase(run, service, table, options.caseIndex);
    await sleep(2000);
    const after = await settled(db, 30_000);
    run.stateLines = diff(before, after);
    for (const l of run.stateLines)
      run.violations.push({ cause: 'state changed', surface: 'state', mutator: l.split(':')[0], detail: l.split(' ')[1], text: l });
    if (options.caseIndex === undefined) await controlRun(run, service, table);
    if (service.errors.size)
      run.notes.push(`service log: ${[...service.errors].map(([m, n]) => `${n} × "${short(m, 100)}"`).join(', ')} (error level)`);
    report(run);
    code = run.violations.length === 0 ? 0 : 1;
  } catch (err) {
    if (!interrupted) process.stderr.write(`fuzz run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    code = 2;
  }
  clearTimeout(watchdog);
  await cleanup();
  process.exit(interrupted ? 130 : code);
}

void main();
