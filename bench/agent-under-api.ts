/**
 * bench:agent-under-api (issue 10, item 4): the agent's `authorization` latency while management API
 * clients loop the most expensive query the default limits allow, all in ONE process as `npm start`
 * runs it (`node dist/main.js`: API, agent and workers, with its own redis-server and MongoDB-wire
 * server under a temporary DATA_DIR, on free ports).
 *
 * Seeds carriers, a pricelist, rates and accounts through the API and `--records` call records through
 * the agent's /v1/record_transactions, then sends /v1/authorization at a steady rate (open loop: one
 * request every 1000/rate ms, whatever the answers do) for `--seconds` per phase:
 *
 *   1. idle, 2. under API load, both with the protection off (API_THREAD=0,
 *      API_MAX_CONCURRENT_QUERIES=0, API_MONGO_POOL_SIZE=0: the service as it was before it);
 *   3. idle, 4. under API load, with the service's defaults (or `--protected-env` settings);
 *      the same data directory: the service is restarted, not seeded again.
 *
 * "API load": `--clients` clients each send the query again as soon as it is answered. The query
 * (`--query`, default `ids`, the only one measured in both services so far: docs/BENCHMARKS.md) is
 * made of as many aliases of one list selection as GRAPHQL_MAX_COST and GRAPHQL_MAX_FIELDS allow
 * (measured with src/shared/infra/graphql/limits.ts at the defaults):
 *   ids      allTransactions(perPage: 1000) { id }                 most records read
 *   account  allTransactions(perPage: 1000) { account { id } }     most lookups (one per record)
 *   wide     allTransactions(perPage: 1000) { every field, destination_rate, account }   largest answer
 *   counts   _allTransactionsMeta(filter) { count }                most collection scans per cost
 *   sorts    allTransactions(perPage: 1, sortField: duration) { id }  most server-side sorts per cost
 *   all      each of the above in turn (phases 2 and 4 once per query)
 *
 *   npm run bench:agent-under-api -- [--records 5000] [--accounts 100] [--rate 50] [--seconds 20]
 *     [--clients 4] [--query ids] [--protected-env NAME=VALUE ...] [--protected-only] [--keep]
 *
 * Last line: `agent-under-api: authorization p99 idle <a> ms, under API load <b> ms` (phases 3 and 4,
 * the protected service; the unprotected figures are printed above it).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSchema, parse } from 'graphql';
import { apiModules } from '../src/api/graphql/schema';
import { loadConfig } from '../src/shared/infra/config';
import { measureOperations } from '../src/shared/infra/graphql/limits';
import { sleep } from '../src/shared/infra/services/process-tools';
import { postJson } from '../test/support/http-json';
import { ServiceProcess } from '../test/support/service-process';

const QUERY_NAMES = ['ids', 'account', 'wide', 'counts', 'sorts'] as const;
type QueryName = (typeof QUERY_NAMES)[number];

// ============================================================================ options

interface Options {
  records: number;
  accounts: number;
  rate: number;
  seconds: number;
  clients: number;
  queries: QueryName[];
  protectedEnv: Record<string, string>;
  protectedOnly: boolean;
  keep: boolean;
}

function parseOptions(argv: string[]): Options {
  const o: Options = {
    records: 5000,
    accounts: 100,
    rate: 50,
    seconds: 20,
    clients: 4,
    queries: ['ids'],
    protectedEnv: {},
    protectedOnly: false,
    keep: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${name} needs a value`);
      return v;
    };
    const int = (min: number, max: number) => {
      const v = value();
      if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new Error(`${name} needs an integer from ${min} to ${max}`);
      return Number(v);
    };
    if (name === '--records') o.records = int(0, 1_000_000);
    else if (name === '--accounts') o.accounts = int(1, 10_000);
    else if (name === '--rate') o.rate = int(1, 1000);
    else if (name === '--seconds') o.seconds = int(1, 3600);
    else if (name === '--clients') o.clients = int(1, 64);
    else if (name === '--query') {
      const v = value();
      if (v === 'all') o.queries = [...QUERY_NAMES];
      else if ((QUERY_NAMES as readonly string[]).includes(v)) o.queries = [v as QueryName];
      else throw new Error(`--query must be one of ${QUERY_NAMES.join(', ')}, all`);
    } else if (name === '--protected-env') {
      const v = value();
      const at = v.indexOf('=');
      if (at < 1) throw new Error('--protected-env needs NAME=VALUE');
      o.protectedEnv[v.slice(0, at)] = v.slice(at + 1);
    } else if (name === '--protected-only') o.protectedOnly = true;
    else if (name === '--keep') o.keep = true;
    else throw new Error(`unknown option ${name}`);
  }
  return o;
}

// ============================================================================ the worst-case queries

const TRANSACTION_FIELDS =
  'id transaction_tag account_tag source source_ip destination carrier_ip tags authorized unauthorized_reason ' +
  'destination_rate { pricelist_tag carrier_tag prefix connect_fee rate rate_increment interval_start description } ' +
  'timestamp_auth timestamp_begin timestamp_end inbound failed duration fee account { id account_tag balance }';

/** One alias of the query; `i` spreads the aliases over the pages of records. */
function aliasOf(name: QueryName, i: number, pages: number): string {
  switch (name) {
    case 'ids':
      return `q${i}: allTransactions(page: ${i % pages}, perPage: 1000) { id }`;
    case 'account':
      return `q${i}: allTransactions(page: ${i % pages}, perPage: 1000) { account { id } }`;
    case 'wide':
      return `q${i}: allTransactions(page: ${i % pages}, perPage: 1000) { ${TRANSACTION_FIELDS} }`;
    case 'counts':
      return `q${i}: _allTransactionsMeta(filter: { inbound: false, timestamp_begin_gte: "2020-01-01T00:00:${String(i % 60).padStart(2, '0')}" }) { count }`;
    case 'sorts':
      return `q${i}: allTransactions(page: ${i}, perPage: 1, sortField: "duration", sortOrder: "desc") { id }`;
  }
}

interface WorstQuery {
  name: QueryName;
  text: string;
  aliases: number;
  cost: number;
  fields: number;
  depth: number;
}

/** As many aliases as the default GRAPHQL_MAX_COST and GRAPHQL_MAX_FIELDS allow, measured as the API measures them. */
function worstQuery(name: QueryName, records: number): WorstQuery {
  const config = loadConfig({});
  const schema = buildSchema(apiModules.map((m) => m.typeDefs).join('\n'));
  const pages = Math.max(1, Math.ceil(records / 1000));
  const build = (n: number) => `query Worst { ${Array.from({ length: n }, (_, i) => aliasOf(name, i, pages)).join(' ')} }`;
  const measure = (n: number) => measureOperations(schema, parse(build(n)))[0].measure!;
  const one = measure(1);
  let n = Math.max(1, Math.min(Math.floor(config.graphqlMaxCost / one.cost), Math.floor(config.graphqlMaxFields / one.fields)));
  while (n > 1 && (measure(n).cost > config.graphqlMaxCost || measure(n).fields > config.graphqlMaxFields)) n--;
  const m = measure(n);
  if (m.depth > config.graphqlMaxDepth) throw new Error(`query ${name} is deeper than GRAPHQL_MAX_DEPTH`);
  return { name, text: build(n), aliases: n, cost: m.cost, fields: m.fields, depth: m.depth };
}

// ============================================================================ HTTP

/** Long enough for the worst query the API's limits admit. */
const HTTP_TIMEOUT_MS = 120_000;

async function gql(
  service: ServiceProcess,
  token: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const a = await postJson(`${service.apiUrl}/graphql`, { query, variables }, { token, timeoutMs: HTTP_TIMEOUT_MS });
  const body = a.json as { data?: Record<string, unknown>; errors?: unknown[] } | undefined;
  if (a.status !== 200 || body?.errors?.length) throw new Error(`API request failed (${a.status}): ${JSON.stringify(body).slice(0, 400)}`);
  return body!.data!;
}

// ============================================================================ seeding

const DESTINATION = '3932123456';

async function seed(service: ServiceProcess, token: string, o: Options): Promise<void> {
  await gql(
    service,
    token,
    'mutation { a: createCarrier(carrier_tag: "c1", host: "10.0.0.1", port: 5060) { id } b: createCarrier(carrier_tag: "c2", host: "10.0.0.2", port: 5060, protocol: TCP) { id } }',
  );
  await gql(service, token, 'mutation { createPricelist(pricelist_tag: "pl", name: "retail", currency: USD) { id } }');
  await gql(
    service,
    token,
    `mutation {
      a: createPricelistRate(pricelist_tag: "pl", carrier_tag: "c1", prefix: "39", connect_fee: 0, rate: 20, rate_increment: 60, interval_start: 0) { id }
      b: createPricelistRate(pricelist_tag: "pl", carrier_tag: "c2", prefix: "39", connect_fee: 0, rate: 25, rate_increment: 60, interval_start: 0) { id }
      c: createPricelistRate(pricelist_tag: "pl", carrier_tag: "c1", prefix: "3932", connect_fee: 0, rate: 30, rate_increment: 1, interval_start: 0) { id }
    }`,
  );
  for (let from = 0; from < o.accounts; from += 100) {
    const aliases = Array.from({ length: Math.min(100, o.accounts - from) }, (_, k) => {
      const i = from + k;
      return `a${i}: createAccount(account_tag: "acc${i}", type: PREPAID, balance: "100000000000", pricelist_tags: ["pl"]) { id }`;
    });
    await gql(service, token, `mutation { ${aliases.join(' ')} }`);
  }
  const base = Date.parse('2026-01-01T00:00:00Z');
  const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  for (let from = 0; from < o.records; from += 1000) {
    const transactions = Array.from({ length: Math.min(1000, o.records - from) }, (_, k) => {
      const i = from + k;
      const begin = base + i * 7000;
      return {
        transaction_tag: `rec-${i}`,
        account_tag: `acc${i % o.accounts}`,
        source: `+3220${String(i).padStart(6, '0')}`,
        destination: `39${String(320000000 + i)}`,
        timestamp_begin: stamp(begin),
        timestamp_end: stamp(begin + 1000 * (1 + (i % 1200))),
        source_ip: '192.0.2.10',
        carrier_ip: '10.0.0.1:5060',
        tags: ['bench', `batch-${from / 1000}`],
      };
    });
    const a = await postJson(`${service.agentUrl}/v1/record_transactions`, { transactions }, { token, timeoutMs: HTTP_TIMEOUT_MS });
    const results = (a.json as { results?: Array<{ ok: boolean; reason: string | null }> } | undefined)?.results;
    const refused = results?.filter((r) => !r.ok) ?? [];
    if (a.status !== 200 || !results || refused.length > 0)
      throw new Error(`recording calls failed (${a.status}): ${JSON.stringify(refused[0] ?? a.json).slice(0, 300)}`);
  }
  const data = await gql(service, token, '{ m: _allTransactionsMeta { count } }');
  const count = (data.m as { count: number }).count;
  if (count !== o.records) throw new Error(`expected ${o.records} records, the API counts ${count}`);
}

// ============================================================================ measuring

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface PhaseResult {
  label: string;
  agent: { n: number; p50: number; p99: number; max: number; failed: number; failures: Map<string, number> };
  api: { completed: number; refused: number; failed: number; p50: number; max: number; bytes: number };
  loop: { p99: number; max: number } | null;
}

/** Event-loop delay of the service's main thread (agent, workers) since the previous scrape (prom-client resets it on each). */
async function eventLoop(service: ServiceProcess): Promise<{ p99: number; max: number } | null> {
  try {
    const text = await (await fetch(`${service.agentUrl}/metrics`, { signal: AbortSignal.timeout(60_000) })).text();
    const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
    return { p99: value('nodejs_eventloop_lag_p99_seconds'), max: value('nodejs_eventloop_lag_max_seconds') };
  } catch {
    return null;
  }
}

async function authorizeOnce(
  service: ServiceProcess,
  token: string,
  i: number,
  accounts: number,
): Promise<{ ms: number; failure: string | null }> {
  const started = performance.now();
  try {
    const a = await postJson(
      `${service.agentUrl}/v1/authorization`,
      { account_tag: `acc${i % accounts}`, destination: DESTINATION },
      { token, timeoutMs: HTTP_TIMEOUT_MS },
    );
    const body = a.json as { authorized?: boolean; unauthorized_reason?: string | null } | undefined;
    const ms = performance.now() - started;
    if (a.status !== 200) return { ms, failure: `HTTP ${a.status}` };
    if (body?.authorized !== true) return { ms, failure: body?.unauthorized_reason ?? 'not authorized' };
    return { ms, failure: null };
  } catch (err) {
    return { ms: performance.now() - started, failure: (err as Error).name };
  }
}

async function phase(label: string, service: ServiceProcess, token: string, o: Options, query: WorstQuery | null): Promise<PhaseResult> {
  await eventLoop(service); // resets the service's event-loop histogram
  let stop = false;
  const apiTimes: number[] = [];
  let refused = 0;
  let apiFailed = 0;
  let bytes = 0;
  const clients = query
    ? Array.from({ length: o.clients }, async () => {
        while (!stop) {
          const started = performance.now();
          try {
            const a = await postJson(`${service.apiUrl}/graphql`, { query: query.text }, { token, timeoutMs: 300_000 });
            const body = a.json as { errors?: unknown[] } | undefined;
            if (a.status === 429) {
              refused++;
              await sleep(1000); // its Retry-After
            } else if (a.status !== 200 || body?.errors?.length) {
              apiFailed++;
              if (apiFailed === 1) process.stdout.write(`  first API failure: ${a.status} ${JSON.stringify(body).slice(0, 300)}\n`);
            } else {
              apiTimes.push(performance.now() - started);
              bytes = a.text.length;
            }
          } catch (err) {
            apiFailed++;
            if (apiFailed === 1) process.stdout.write(`  first API failure: ${(err as Error).message}\n`);
          }
        }
      })
    : [];
  // Let the clients' first queries get going before measuring.
  if (query) await sleep(2000);
  const pending: Array<Promise<{ ms: number; failure: string | null }>> = [];
  const interval = 1000 / o.rate;
  const started = performance.now();
  for (let i = 0; performance.now() - started < o.seconds * 1000; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(authorizeOnce(service, token, i, o.accounts));
  }
  const answers = await Promise.all(pending);
  const loop = await eventLoop(service);
  stop = true;
  await Promise.all(clients);
  const times = answers.map((a) => a.ms).sort((a, b) => a - b);
  const failures = new Map<string, number>();
  for (const a of answers) if (a.failure) failures.set(a.failure, (failures.get(a.failure) ?? 0) + 1);
  const apiSorted = apiTimes.sort((a, b) => a - b);
  return {
    label,
    agent: {
      n: times.length,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      max: times[times.length - 1],
      failed: answers.filter((a) => a.failure).length,
      failures,
    },
    api: {
      completed: apiTimes.length,
      refused,
      failed: apiFailed,
      p50: percentile(apiSorted, 50),
      max: apiSorted[apiSorted.length - 1] ?? NaN,
      bytes,
    },
    loop,
  };
}

function show(r: PhaseResult, o: Options): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
  const fails = r.agent.failed ? ` (${[...r.agent.failures].map(([k, v]) => `${k} ${v}`).join(', ')})` : '';
  let line = `  ${r.label.padEnd(34)} agent authorization: n ${r.agent.n}, p50 ${f(r.agent.p50)} ms, p99 ${f(r.agent.p99)} ms, max ${f(r.agent.max)} ms, failed ${r.agent.failed}${fails}`;
  if (r.loop) line += `; event loop delay p99 ${f(r.loop.p99)} ms, max ${f(r.loop.max)} ms`;
  if (r.api.completed + r.api.refused + r.api.failed > 0) {
    line += `\n  ${''.padEnd(34)} API (${o.clients} clients): ${r.api.completed} queries answered (p50 ${f(r.api.p50)} ms, max ${f(r.api.max)} ms, ${(r.api.bytes / 1e6).toFixed(1)} MB each), ${r.api.refused} refused 429, ${r.api.failed} failed`;
  }
  return line;
}

// ============================================================================ the run

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const queries = o.queries.map((q) => worstQuery(q, o.records));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-agent-under-api-'));
  const token = randomBytes(24).toString('hex');
  const unprotected = { API_THREAD: '0', API_MAX_CONCURRENT_QUERIES: '0', API_MONGO_POOL_SIZE: '0' };
  const defaults = loadConfig({});
  const protectedConfig = loadConfig(o.protectedEnv);
  const services: ServiceProcess[] = [];
  const results: PhaseResult[] = [];
  const started = Date.now();
  let mongoKind = '';
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    void Promise.all(services.map((s) => s.stop())).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    process.stdout.write(`temp dir ${dir}\n`);
    for (const q of queries)
      process.stdout.write(
        `query ${q.name}: ${q.aliases} aliases, cost ${q.cost} of ${defaults.graphqlMaxCost}, ${q.fields} fields of ${defaults.graphqlMaxFields}, depth ${q.depth}\n`,
      );
    const runs: Array<{ label: string; settings: Record<string, string> }> = [];
    if (!o.protectedOnly) runs.push({ label: 'unprotected', settings: unprotected });
    runs.push({ label: 'protected', settings: o.protectedEnv });
    let seeded = false;
    for (const run of runs) {
      const service = new ServiceProcess();
      services.push(service);
      process.stdout.write(
        `starting node dist/main.js (${run.label}: ${
          Object.entries(run.settings)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ') || 'defaults'
        })\n`,
      );
      await service.start({
        dir,
        logName: `service-${run.label}`,
        env: { RATING_TOKENS: `bench:read+write+agent:${token}`, ...run.settings },
      });
      mongoKind = service.mongoKind || mongoKind;
      if (!seeded) {
        const t = Date.now();
        await seed(service, token, o);
        seeded = true;
        process.stdout.write(`seeded ${o.accounts} accounts, 3 rates, ${o.records} records in ${((Date.now() - t) / 1000).toFixed(1)} s\n`);
      }
      // Warm-up: JIT, connections, the workers' rating index.
      await Promise.all(Array.from({ length: 200 }, (_, i) => authorizeOnce(service, token, i, o.accounts)));
      const idle = await phase(`${run.label}: idle`, service, token, o, null);
      results.push(idle);
      process.stdout.write(show(idle, o) + '\n');
      for (const q of queries) {
        const loaded = await phase(`${run.label}: API load (${q.name})`, service, token, o, q);
        results.push(loaded);
        process.stdout.write(show(loaded, o) + '\n');
      }
      await service.stop();
    }
  } finally {
    await Promise.all(services.map((s) => s.stop()));
    if (!o.keep && !interrupted) rmSync(dir, { recursive: true, force: true });
    else process.stdout.write(`kept ${dir}\n`);
  }
  const p = protectedConfig;
  process.stdout.write(
    `conditions: one process (node dist/main.js: API, agent, workers x ${defaults.workerConcurrency}), ${mongoKind || 'local MongoDB-wire server'}, redis-server; ` +
      `${o.accounts} accounts, ${o.records} records; agent /v1/authorization open loop at ${o.rate}/s for ${o.seconds} s per phase; ` +
      `API load: ${o.clients} clients looping the query; protected: API_THREAD=${p.apiThread ? 1 : 0}, API_MAX_CONCURRENT_QUERIES=${p.apiMaxConcurrentQueries}, API_QUERY_WAIT_MS=${p.apiQueryWaitMs}, API_MONGO_POOL_SIZE=${p.apiMongoPoolSize}; ` +
      `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), node ${process.version}; ${((Date.now() - started) / 1000).toFixed(0)} s in all\n`,
  );
  for (const r of results) process.stdout.write(show(r, o) + '\n');
  const protectedIdle = results.find((r) => r.label === 'protected: idle')!;
  const protectedLoaded = results.filter((r) => r.label.startsWith('protected: API load'));
  const worst = protectedLoaded.reduce((a, b) => (b.agent.p99 > a.agent.p99 ? b : a));
  const unprotectedLoaded = results.filter((r) => r.label.startsWith('unprotected: API load'));
  if (unprotectedLoaded.length > 0) {
    const u = unprotectedLoaded.reduce((a, b) => (b.agent.p99 > a.agent.p99 ? b : a));
    process.stdout.write(`without the protection: authorization p99 under API load ${u.agent.p99.toFixed(1)} ms (${u.label})\n`);
  }
  process.stdout.write(
    `agent-under-api: authorization p99 idle ${protectedIdle.agent.p99.toFixed(1)} ms, under API load ${worst.agent.p99.toFixed(1)} ms\n`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
