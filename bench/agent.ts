/**
 * bench:agent (issue 12) — the agent loaded the way a SIP proxy loads it, with every part of the
 * service in its own process: local redis-server and MongoDB-wire server (ephemeral; or MONGO_URL /
 * REDIS_URL), the agent (`node dist/agent/main.js`) and `--workers` worker processes
 * (`node dist/workers/main.js`), all on loopback, the bench driving the agent's REST mirror.
 *
 *   npm run bench:agent                        the sweep, then the closed loop and the bare round trip
 *   npm run bench:agent -- --sweep             open-loop steps of rising rate (--steps 50,100,...; --seconds per step, default 10)
 *   npm run bench:agent -- --cps 100           one open-loop step (--seconds, default 20; --hold, default 2)
 *   npm run bench:agent -- --closed            closed loop (--pairs, --concurrency) and the bare queue round trip
 *   other options: --workers 1 --accounts 1000 --warmup 40 --profile DIR (agent and workers with --cpu-prof)
 *
 * Open loop: `--cps` new calls per second on a fixed schedule, each authorization -> begin -> hold
 * (--hold s +-50 %) -> end, accounts drawn Zipf (s = 1). A step holds when p99 of authorization and
 * of begin are below 50 ms and nothing failed (HTTP errors, ok:false / refusals such as TIMEOUT or
 * UNAVAILABLE, calls not charged after the drain). The sweep stops at the first step that does not hold.
 * Closed loop: begin+end pairs, `--concurrency` in flight; beside it no-op jobs through the agent's
 * request path (request() + ReplyInbox) at the same concurrency; ratio = agent operations/s / round trips/s;
 * and `GET /health` on the agent (HTTP with nothing behind it), from which the ratio's ceiling for any
 * operation answered over HTTP through one round trip: CPU per round trip / (that + CPU per request).
 *
 * The last line is always
 *   agent: <max calls/s with p99 < 50 ms> calls/s at p99 < 50 ms; p99 authorization <a> ms; p99 begin <b> ms; queue limit <q> round trips/s; ratio <r>
 * (<a>/<b> at the highest rate that held, or at the lowest step when none held, then 0 calls/s;
 * n/a for the parts a mode did not measure).
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/shared/infra/config';
import { AppContext, createContext } from '../src/shared/domain/context';
import { createLogger } from '../src/shared/infra/logger';
import { startLocalServices, type Endpoints } from '../src/shared/infra/services/local-services';
import { freePort, sleep, which } from '../src/shared/infra/services/process-tools';
import { AgentClient } from './agent/client';
import { BareRoundTrip, closedLines, closedLoop, httpFloor } from './agent/closed-loop';
import { runStep, P99_LIMIT_MS, type StepResult } from './agent/open-loop';
import { CpuMeter, processName, RoleProcess, serverPid } from './agent/processes';
import { accountTag, parseOptions, seedBench } from './agent/setup';
import { percentile } from './agent/stats';
import { zipfPicker } from './support/zipf';

const say = (line: string) => process.stdout.write(`${line}\n`);

let cleanup: () => Promise<void> = async () => undefined;

async function main() {
  const o = parseOptions(process.argv.slice(2));
  const benchStarted = performance.now();
  const profileDir = o.profile ? path.resolve(o.profile) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const profilesBefore = new Set(profileDir ? readdirSync(profileDir) : []);

  let services: Endpoints | undefined = undefined;
  let ctx: AppContext | undefined = undefined;
  let client: AgentClient | undefined = undefined;
  let bare: BareRoundTrip | undefined;
  const roles: RoleProcess[] = [];
  let cleaning: Promise<void> | undefined;
  cleanup = () =>
    (cleaning ??= (async () => {
      client?.close();
      await bare?.close();
      // The agent first (no new work), then the workers (they finish the jobs in hand).
      await roles.find((r) => r.name === 'agent')?.stop();
      await Promise.all(roles.filter((r) => r.name !== 'agent').map((r) => r.stop()));
      if (ctx) {
        await ctx.mongo.db.dropDatabase().catch(() => undefined);
        await ctx.close().catch(() => undefined);
      }
      await services?.stop();
    })());

  services = await startLocalServices(
    { mongoUrl: process.env.MONGO_URL || undefined, redisUrl: process.env.REDIS_URL || undefined, dataDir: '' },
    { ephemeral: true },
  );
  const serviceEnv: Record<string, string> = {
    MONGO_URL: services.mongoUrl,
    REDIS_URL: services.redisUrl,
    MONGO_DB: 'bench_agent',
    QUEUE_PREFIX: 'benchagent',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    // The default (60,000 requests a minute per client address) would refuse a sweep's upper steps: a proxy's own deployment sizes it.
    RATE_LIMIT_MAX: '0',
  };
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...serviceEnv };
  delete childEnv.RATING_TOKENS; // no tokens: development access, as the brief of the bench wants
  const config = loadConfig({ ...childEnv, AGENT_PORT: '0', METRICS_PORT: '0' });
  ctx = await createContext(config, services, createLogger(config, 'bench'));
  const { linked } = await seedBench(ctx, o);

  const nodeArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  for (let w = 1; w <= o.workers; w++) {
    const port = await freePort();
    roles.push(new RoleProcess(`worker${w}`, path.join('workers', 'main.js'), { ...childEnv, METRICS_PORT: String(port) }, port, nodeArgs));
  }
  const agentPort = await freePort();
  const agent = new RoleProcess(
    'agent',
    path.join('agent', 'main.js'),
    { ...childEnv, AGENT_PORT: String(agentPort) },
    agentPort,
    nodeArgs,
  );
  roles.push(agent);
  await Promise.all(roles.map((r) => r.ready()));
  for (const r of roles) r.logged.clear(); // start-up notices (no tokens, no alert channel)

  const redisPid = serverPid(services.redisUrl);
  const mongoPid = serverPid(services.mongoUrl);
  const mongoKind = process.env.MONGO_URL
    ? `MONGO_URL (${mongoPid ? `local process ${processName(mongoPid)}` : 'not on this machine'})`
    : which('mongod')
      ? 'local mongod, ephemeral'
      : 'local MongoDB-wire server (mongo-java-server, memory backend, ephemeral)';
  const meter = new CpuMeter([
    { name: 'agent', pid: agent.pid },
    ...roles.filter((r) => r !== agent).map((r) => ({ name: r.name, pid: r.pid })),
    { name: 'redis', pid: redisPid },
    { name: 'mongo', pid: mongoPid },
    { name: 'bench', pid: process.pid },
  ]);

  const cpus = os.cpus();
  say(
    `conditions: ${cpus.length} CPUs (${cpus[0]?.model ?? 'unknown'}), node ${process.version}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at start`,
  );
  say(
    `  processes: agent (node dist/agent/main.js, pid ${agent.pid}), ${o.workers} worker processes (node dist/workers/main.js, pids ${roles
      .filter((r) => r !== agent)
      .map((r) => r.pid)
      .join(' ')}) x WORKER_CONCURRENCY ${config.workerConcurrency}, ` +
      `redis-server (pid ${redisPid ?? 'n/a'}${process.env.REDIS_URL ? ', REDIS_URL' : ', ephemeral'}, ${services.redisUrl.startsWith('unix:') ? 'Unix socket' : 'TCP'}), ${mongoKind} (pid ${mongoPid ?? 'n/a'}), this bench (pid ${process.pid})`,
  );
  say(
    `  service env: NODE_ENV=test LOG_LEVEL=warn no tokens (development access) RATE_LIMIT_MAX=0 AGENT_TIMEOUT_MS=${config.agentTimeoutMs} PROCESSING_WINDOW_MS=${config.processingWindowMs} PROCESSING_CONCURRENCY=${config.processingConcurrency}${profileDir ? `; --cpu-prof into ${profileDir}` : ''}`,
  );
  say(
    `  data: ${o.accounts} prepaid accounts (balance 10^18, no concurrency limit), ${linked} of them linked to ${o.parents} parent accounts; 2 carriers x 4 prefixes at 60/min, 1 s increments; ` +
      `calls pick accounts Zipf (s = 1); client: node:http keep-alive pool, REST mirror /v1/*`,
  );
  say(
    `  open loop: hold ${o.hold} s +-50 %, authorization (with transaction_tag) -> begin -> hold -> end; a step holds at p99 authorization and begin < ${P99_LIMIT_MS} ms and no error`,
  );
  say(
    `  processing lag: end answered (bench clock) -> the charge's ledger entry \`at\` (stamped by the worker with the balance debit; the record is marked charged right after), read from MongoDB after each step's drain`,
  );
  say(`  CPU: utime+stime from /proc/<pid>/stat over each step (calls + drain), divided by completed calls`);

  meter.reset();
  await sleep(2000);
  say(`idle, nothing offered: ${meter.perSecond()}`);

  client = new AgentClient('127.0.0.1', agentPort);
  const pickIndex = zipfPicker(o.accounts);
  const pickAccount = () => accountTag(pickIndex());
  const steps: StepResult[] = [];
  let stepNo = 0;
  const step = async (label: string, cps: number, seconds: number) => {
    const r = await runStep(ctx!, client!, meter, { label, cps, seconds, hold: o.hold, tagPrefix: `s${stepNo++}`, pickAccount });
    for (const line of r.lines) say(line);
    return r;
  };

  if ((o.sweep || o.cps !== undefined) && o.warmup > 0) {
    // The MongoDB-wire server's JVM keeps compiling (C2) for about 35 s of load: measured, its compiler
    // threads used more CPU than its request threads until then. A service runs for days; measure it warm.
    const r = await runStep(ctx, client, meter, {
      label: 'warm-up',
      cps: Math.min(50, o.cps ?? 50),
      seconds: o.warmup,
      hold: Math.min(o.hold, 1),
      tagPrefix: `w${stepNo++}`,
      pickAccount,
    });
    say(`${r.lines[0].replace(/ -> (NOT )?held$/, '')} (not counted)`);
  }
  if (o.sweep) {
    say(`sweep: ${o.steps.join(', ')} calls/s, ${o.sweepSeconds} s each, stopping at the first step that does not hold`);
    for (const cps of o.steps) {
      const r = await step(`step ${cps}`, cps, o.sweepSeconds);
      steps.push(r);
      if (!r.held) break;
    }
  }
  if (o.cps !== undefined) steps.push(await step(`open loop ${o.cps}`, o.cps, o.seconds));

  let queueLimit: number | undefined;
  let ratio: number | undefined;
  if (o.closed) {
    const accountOf = (i: number) => accountTag(i % o.accounts);
    await closedLoop(client, Math.min(200, o.pairs), o.concurrency, 'cw', accountOf); // warm-up, not counted
    meter.reset();
    const c = await closedLoop(client, o.pairs, o.concurrency, 'cl', accountOf);
    const pairCpu = meter.measure(c.begin.length, 'pair (the loop only: processing that ran meanwhile is in, the rest of it not)');
    // Let processing of the ended calls finish before the bare round trip has the workers.
    const until = Date.now() + 60_000;
    while (
      Date.now() < until &&
      Object.values(await ctx.queues.processing.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).some((n) => n > 0)
    )
      await sleep(100);
    bare = new BareRoundTrip(services.redisUrl, config.queuePrefix, ctx.logger, config.agentTimeoutMs);
    await bare.start();
    await bare.run(500, o.concurrency); // warm-up, not counted
    meter.reset();
    const b = await bare.run(2 * o.pairs, o.concurrency);
    const roundTripCpu = meter.measure(b.latency.length, 'round trip');
    await httpFloor(client, 500, o.concurrency); // warm-up, not counted
    meter.reset();
    const h = await httpFloor(client, 2 * o.pairs, o.concurrency);
    const httpCpu = meter.measure(h.latency.length, 'HTTP request');
    const cpu = { pair: pairCpu.totalMs, roundTrip: roundTripCpu.totalMs, httpRequest: httpCpu.totalMs };
    for (const line of closedLines(c, b, h, cpu, o.pairs, o.concurrency)) say(line);
    say(`  closed loop ${pairCpu.line}`);
    say(`  bare round trip ${roundTripCpu.line}`);
    say(`  HTTP alone ${httpCpu.line}`);
    queueLimit = b.perSecond;
    ratio = c.opsPerSecond / b.perSecond;
  }

  for (const r of roles) if (r.logged.size) say(`${r.name} logged (warn and above): ${r.logSummary()}`);
  say(
    `bench ran ${((performance.now() - benchStarted) / 1000).toFixed(0)} s (the other engineer's work may share these cores: see "machine busy" against "these processes")`,
  );
  await cleanup();
  if (profileDir) {
    const written = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile') && !profilesBefore.has(f));
    const byPid = roles.map((r) => `${r.name} ${written.some((f) => f.includes(`.${r.pid}.`)) ? 'written' : 'MISSING'}`);
    say(`profiles in ${profileDir}: ${written.join(', ') || 'none'} (${byPid.join(', ')}); open them in Chrome DevTools or speedscope`);
    if (!existsSync(profileDir) || written.length < roles.length) process.exitCode = 1;
  }

  const held = steps.filter((s) => s.held);
  const best = held.length
    ? held.reduce((a, b) => (b.cps > a.cps ? b : a))
    : steps.length
      ? steps.reduce((a, b) => (b.cps < a.cps ? b : a))
      : undefined;
  const f1 = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? 'n/a' : v.toFixed(1));
  say(
    `agent: ${best ? (best.held ? String(best.cps) : '0') : 'n/a'} calls/s at p99 < ${P99_LIMIT_MS} ms; ` +
      `p99 authorization ${f1(best && percentile(best.auth, 99))} ms; p99 begin ${f1(best && percentile(best.begin, 99))} ms; ` +
      `queue limit ${queueLimit === undefined ? 'n/a' : queueLimit.toFixed(0)} round trips/s; ratio ${ratio === undefined ? 'n/a' : ratio.toFixed(2)}`,
  );
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    say(`${signal}: stopping the agent, the workers and the local servers`);
    void cleanup().finally(() => process.exit(130));
  });
}

main().catch(async (err) => {
  console.error(err);
  await cleanup().catch((e) => console.error(e));
  process.exit(1);
});
