/**
 * What the chaos harnesses share (test/chaos/chaos.ts, test/chaos/rerate-chaos.ts): small tools, the
 * managed processes (started, killed by a fault, started again on the same port), the servers
 * (redis-server without persistence, the MongoDB-wire server keeping its data in the run's directory),
 * a fault loop on a seeded schedule, and the Redis fault (SIGKILL, with or without its data).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, createWriteStream, mkdirSync, rmSync, WriteStream } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { ensureLauncherJar } from '../../src/shared/infra/services/mongo-server';
import { ensureRedisServer } from '../../src/shared/infra/services/redis-server';
import { withParentDeathSignal } from '../../src/shared/infra/services/process-tools';
import { testPort } from '../support/ports';
import { between, Rng, seededRng } from '../support/rng';

export const HOST = '127.0.0.1';

// ============================================================================ small tools

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function bump(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

export const total = (map: Map<string, number>) => [...map.values()].reduce((a, b) => a + b, 0);

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** What a managed process needs of the harness's run. */
export interface ProcHost {
  /** The run's temporary directory: each process logs to logs/<name>.log under it. */
  readonly tmp: string;
  /** Set when the run is stopping: no (re)start then. */
  readonly closing: boolean;
  note(text: string): void;
  /** Every managed process of the run (each one adds itself). */
  readonly procs: Proc[];
}

// ============================================================================ managed processes

export interface ProcSpec {
  name: string;
  command(): [string, string[]];
  env?: NodeJS.ProcessEnv;
  /** The MongoDB-wire launcher exits when its stdin closes: keep a pipe open. */
  keepStdin?: boolean;
  /** A line on stdout/stderr that says the process is ready. */
  readyLine?: RegExp;
  /** Or a probe. */
  ready?: () => Promise<boolean>;
  readyTimeoutMs: number;
  /** pino JSON logs: count the warn, error and fatal lines. */
  pino?: boolean;
}

/**
 * One process slot (the agent, a worker, redis-server, the MongoDB-wire server): started, killed by a
 * fault, started again. An exit nobody asked for is counted and the process started again.
 */
export class Proc {
  state: 'down' | 'starting' | 'up' = 'down';
  generation = 0;
  readonly unexpectedExits: string[] = [];
  startFailures = 0;
  readonly levels = new Map<string, number>();
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private starting: Promise<void> | undefined;
  private planned = false;
  private tail = '';
  private sawReadyLine = false;
  private pending = '';
  private readonly log: WriteStream;

  constructor(
    private readonly run: ProcHost,
    private readonly spec: ProcSpec,
  ) {
    this.log = createWriteStream(path.join(run.tmp, 'logs', `${spec.name}.log`), { flags: 'a' });
    this.log.on('error', () => undefined);
    run.procs.push(this);
  }

  get name(): string {
    return this.spec.name;
  }

  /** Starts the process unless it is up; retries a failed start a few times. */
  ensureUp(): Promise<void> {
    if (this.state === 'up') return Promise.resolve();
    this.starting ??= (async () => {
      try {
        for (let attempt = 1; ; attempt++) {
          if (this.run.closing) throw new Error(`${this.name}: not started, the run is closing`);
          try {
            await this.spawnOnce();
            return;
          } catch (err) {
            this.startFailures += 1;
            this.run.note(`${this.name} start #${this.generation} failed: ${errorText(err).split('\n')[0]}`);
            if (attempt >= 8) throw err;
            await sleep(Math.min(500 * attempt, 3000));
          }
        }
      } finally {
        this.starting = undefined;
      }
    })();
    return this.starting;
  }

  private async spawnOnce(): Promise<void> {
    const [command, args] = this.spec.command();
    this.state = 'starting';
    this.generation += 1;
    this.planned = false;
    this.tail = '';
    this.pending = '';
    this.sawReadyLine = false;
    const child = spawn(command, args, {
      env: this.spec.env ?? process.env,
      stdio: [this.spec.keepStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdin?.on('error', () => undefined);
    this.log.write(`\n===== ${this.name} #${this.generation} pid ${child.pid ?? '?'} at ${new Date().toISOString()} =====\n`);
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      this.log.write(chunk);
      this.tail = (this.tail + text).slice(-6000);
      if (this.spec.readyLine && !this.sawReadyLine && this.spec.readyLine.test(this.tail)) this.sawReadyLine = true;
      if (this.spec.pino) this.countLevels(text);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    this.exited = new Promise<void>((resolve) => {
      let done = false;
      const finish = (how: string) => {
        if (done) return;
        done = true;
        const wasUp = this.state === 'up' && this.child === child;
        if (this.child === child) this.state = 'down';
        this.log.write(`===== ${this.name} #${this.generation} exited: ${how} =====\n`);
        if (wasUp && !this.planned && !this.run.closing) {
          this.unexpectedExits.push(how);
          this.run.note(`${this.name} exited by itself (${how}); starting it again`);
          setTimeout(() => void this.ensureUp().catch(() => undefined), 500);
        }
        resolve();
      };
      child.once('exit', (code, signal) => finish(signal ? `signal ${signal}` : `code ${code}`));
      child.once('error', (err) => finish(`spawn error: ${err.message}`));
    });
    const until = Date.now() + this.spec.readyTimeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `${this.name} exited (${child.signalCode ?? child.exitCode}) before it was ready; last output:\n${this.tail.slice(-1500)}`,
        );
      }
      const ready = this.spec.readyLine ? this.sawReadyLine : await (this.spec.ready?.() ?? Promise.resolve(true)).catch(() => false);
      if (ready) break;
      if (this.run.closing || Date.now() > until) {
        await this.kill('SIGKILL');
        throw new Error(`${this.name} was not ready within ${seconds(this.spec.readyTimeoutMs)}; last output:\n${this.tail.slice(-1500)}`);
      }
      await sleep(100);
    }
    this.state = 'up';
  }

  private countLevels(text: string): void {
    const lines = (this.pending + text).split('\n');
    this.pending = lines.pop() ?? '';
    for (const line of lines) {
      const level = /"level":(\d+)/.exec(line)?.[1];
      if (level === '40') bump(this.levels, 'warn');
      else if (level === '50') bump(this.levels, 'error');
      else if (level === '60') bump(this.levels, 'fatal');
    }
  }

  /** Kills the process on purpose (a fault, or the end of the run) and waits for it to exit (bounded). */
  async kill(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      this.state = 'down';
      return;
    }
    this.planned = true;
    this.state = 'down';
    child.kill(signal);
    try {
      await withTimeout(this.exited, signal === 'SIGKILL' ? 5000 : 15000, `${this.name} exit after ${signal}`);
    } catch {
      this.run.note(`${this.name} did not exit after ${signal}: SIGKILL`);
      child.kill('SIGKILL');
      await withTimeout(this.exited, 5000, `${this.name} exit after SIGKILL`).catch(() => undefined);
    }
  }

  async destroy(): Promise<void> {
    await withTimeout(this.starting ?? Promise.resolve(), 5000, 'start').catch(() => undefined);
    this.child?.stdin?.end();
    await this.kill('SIGKILL');
  }

  closeLog(): Promise<void> {
    return new Promise((resolve) => this.log.end(() => resolve()));
  }
}

export async function httpReady(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://${HOST}:${port}/health`, { signal: AbortSignal.timeout(1000) });
    await response.text();
    return response.status === 200;
  } catch {
    return false;
  }
}

export async function redisReady(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

// ============================================================================ servers

export interface Servers {
  redis: Proc;
  mongo: Proc;
  redisUrl: string;
  mongoUrl: string;
  redisDir: string;
  /** Further free ports asked for (the agent's, the workers'). */
  ports: number[];
}

/**
 * redis-server and the MongoDB-wire server of a run, each on a fixed free port (a restarted process
 * comes back where its clients look for it), and `extraPorts` more free ports. redis-server runs with
 * no persistence: a restart loses everything unless the fault saved a dump.rdb first. The MongoDB-wire
 * server keeps its data in the run's directory (`--h2 <tmp>/db.mv`), so it may be restarted; or, with
 * `mongoBackend: 'memory'` (a harness that never restarts it), on its heap, several times faster with
 * a hundred thousand records, with the JVM settings of the service's own ephemeral server
 * (src/shared/infra/services/mongo-server.ts).
 */
export async function defineServers(run: ProcHost, extraPorts: number, options: { mongoBackend?: 'h2' | 'memory' } = {}): Promise<Servers> {
  mkdirSync(path.join(run.tmp, 'logs'), { recursive: true });
  const redisDir = path.join(run.tmp, 'redis');
  mkdirSync(redisDir, { recursive: true });
  // The jar is copied: a rebuild of tools/mongo-server during the run must not change the server we restart.
  const jar = path.join(run.tmp, 'mongo-server.jar');
  copyFileSync(ensureLauncherJar(), jar);
  const redisBinary = ensureRedisServer();
  // Fixed ports: a restarted process comes back where its clients (and the other processes) look for it.
  const wanted = 2 + extraPorts;
  const ports = new Set<number>();
  for (let i = 0; ports.size < wanted && i < 50; i++) ports.add(await testPort(HOST));
  if (ports.size < wanted) throw new Error(`could not find ${wanted} free ports`);
  const [redisPort, mongoPort, ...rest] = [...ports];
  const redisUrl = `redis://${HOST}:${redisPort}`;
  const mongoUrl = `mongodb://${HOST}:${mongoPort}`;

  const redis = new Proc(run, {
    name: 'redis',
    // No persistence: a restart loses everything unless the fault saved a dump.rdb first.
    command: () =>
      withParentDeathSignal(redisBinary, [
        '--bind',
        HOST,
        '--port',
        String(redisPort),
        '--dir',
        redisDir,
        '--dbfilename',
        'dump.rdb',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--protected-mode',
        'no',
        '--loglevel',
        'warning',
        '--maxmemory-policy',
        'noeviction',
      ]),
    ready: () => redisReady(redisUrl),
    readyTimeoutMs: 15000,
  });
  const mongo = new Proc(run, {
    name: 'mongo',
    command: () =>
      options.mongoBackend === 'memory'
        ? withParentDeathSignal('java', [
            '-XX:+UseSerialGC',
            '-Xss1m',
            '-XX:MaxRAMPercentage=60',
            '-XX:InitialRAMPercentage=25',
            '-Xmn64m',
            '-XX:MaxTenuringThreshold=0',
            '-jar',
            jar,
            '--host',
            HOST,
            '--port',
            String(mongoPort),
          ])
        : withParentDeathSignal('java', [
            '-XX:+UseParallelGC',
            '-Xss1m',
            '-jar',
            jar,
            '--host',
            HOST,
            '--port',
            String(mongoPort),
            '--h2',
            path.join(run.tmp, 'db.mv'),
          ]),
    keepStdin: true,
    readyLine: /READY \S+:\d+/,
    readyTimeoutMs: 60000,
  });
  return { redis, mongo, redisUrl, mongoUrl, redisDir, ports: rest };
}

/**
 * The Redis fault: SIGKILL of redis-server. With `keep`, SAVE runs first and the restart loads that
 * snapshot (the few writes in between are lost); otherwise, or when SAVE fails, all its data is lost.
 * Returns whether the data was kept. The caller starts it again.
 */
export async function killRedis(run: ProcHost, servers: Pick<Servers, 'redis' | 'redisUrl' | 'redisDir'>, keep: boolean): Promise<boolean> {
  if (keep) {
    // SAVE, then SIGKILL: the restart loads that snapshot (the few writes in between are lost).
    const client = new Redis(servers.redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 2000,
    });
    client.on('error', () => undefined);
    try {
      await withTimeout(
        client.connect().then(() => client.save()),
        5000,
        'redis SAVE',
      );
    } catch (err) {
      run.note(`redis SAVE failed (${errorText(err)}): its data is lost instead`);
      keep = false;
    } finally {
      client.disconnect();
    }
  }
  await servers.redis.kill('SIGKILL');
  if (!keep) rmSync(path.join(servers.redisDir, 'dump.rdb'), { force: true });
  return keep;
}

// ============================================================================ faults

export interface FaultClock {
  /** The run's seed: each loop draws from its own generator, seeded by it and the loop's name. */
  seed: number;
  /** When the fault phase started (Date.now()). */
  phaseStart: number;
  /** No fault starts after endMs - 2 s of the phase. */
  endMs: number;
  /** Aborted when the faults stop. */
  stop: AbortSignal;
  note(text: string): void;
}

/**
 * One kind of fault on a seeded schedule: first at `firstMs` into the phase, then every `everyMs`
 * (a range) after the previous one finished, until the phase ends or the faults stop. A fault that
 * throws is noted, not fatal.
 */
export async function faultLoop(
  clock: FaultClock,
  name: string,
  firstMs: number,
  everyMs: [number, number],
  act: (rng: Rng) => Promise<void>,
): Promise<void> {
  const rng = seededRng(clock.seed + [...name].reduce((h, ch) => h * 31 + ch.charCodeAt(0), 7));
  let at = firstMs;
  for (;;) {
    if (at > clock.endMs - 2000) return;
    await sleep(clock.phaseStart + at - Date.now(), clock.stop);
    if (clock.stop.aborted) return;
    try {
      await act(rng);
    } catch (err) {
      clock.note(`fault ${name}: ${errorText(err).split('\n')[0]}`);
    }
    at = Date.now() - clock.phaseStart + between(rng, everyMs[0], everyMs[1]);
  }
}
