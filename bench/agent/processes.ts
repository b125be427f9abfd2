import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { sleep, withParentDeathSignal } from '../../src/shared/infra/services/process-tools';

const ROOT = path.resolve(__dirname, '..', '..');

/** One of the service's processes, started from dist/ as a deployment starts it. */
export class RoleProcess {
  readonly child: ChildProcess;
  /** Warnings and errors it logged (pino JSON at LOG_LEVEL=warn), by message. */
  readonly logged = new Map<string, number>();
  private tail = '';
  private readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    script: string,
    env: NodeJS.ProcessEnv,
    readonly port: number,
    nodeArgs: string[] = [],
  ) {
    const [command, args] = withParentDeathSignal(process.execPath, [...nodeArgs, path.join(ROOT, 'dist', script)]);
    // Its own process group: a Ctrl-C in the terminal reaches the bench only, which then stops each
    // process in order (SIGTERM); the parent-death signal covers a bench that is killed outright.
    this.child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    let pending = '';
    const onData = (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        this.tail = (this.tail + line + '\n').slice(-4000);
        const msg = /"msg":"([^"]*)"/.exec(line)?.[1] ?? line.slice(0, 120);
        this.logged.set(msg, (this.logged.get(msg) ?? 0) + 1);
      }
    };
    this.child.stdout!.on('data', onData);
    this.child.stderr!.on('data', onData);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Waits until GET /ready on its port answers 200 (its roles are started and it reaches MongoDB and Redis). */
  async ready(timeoutMs = 120_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`${this.name} exited before it was ready; last output:\n${this.tail}`);
      if ((await getStatus(this.port, '/ready')) === 200) return;
      if (Date.now() > until) throw new Error(`${this.name} not ready within ${timeoutMs / 1000} s; last output:\n${this.tail}`);
      await sleep(100);
    }
  }

  /** SIGTERM (it finishes what it holds and exits; a CPU profile is written then), SIGKILL after `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const stopped = await Promise.race([this.exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!stopped) {
      process.stdout.write(`${this.name} did not stop within ${graceMs / 1000} s: SIGKILL\n`);
      this.child.kill('SIGKILL');
      await Promise.race([this.exited, sleep(5000)]);
    }
  }

  /** What it logged at warn level or above, most frequent first. */
  logSummary(): string {
    return [...this.logged]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([m, n]) => `${n}x "${m}"`)
      .join('; ');
  }
}

function getStatus(port: number, urlPath: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

// ---------------------------------------------------------------------------------------- CPU time

let clockTicks: number | undefined;

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`, normally 100). */
export function clkTck(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** utime + stime of a process (all its threads), in seconds; undefined when it cannot be read. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clkTck();
  } catch {
    return undefined;
  }
}

/** The whole machine's busy and total CPU seconds (all cores, /proc/stat). */
export function machineCpu(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = v[3] + (v[4] ?? 0);
  return { busy: (total - idle) / clkTck(), total: total / clkTck() };
}

export function processName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '?';
  }
}

/**
 * The local process serving a redis://, mongodb:// or unix:// URL: the listening socket's inode from
 * /proc/net/tcp(6) (state 0A = LISTEN) or /proc/net/unix (by path), then the process holding that
 * inode among /proc/<pid>/fd. Undefined when the server is elsewhere (a remote or multi-host URL) or
 * not readable.
 */
export function serverPid(url: string): number | undefined {
  if (url.startsWith('unix:')) return pidHolding(listeningUnixInodes(decodeURIComponent(new URL(url).pathname)));
  const port = loopbackPort(url);
  return port === undefined ? undefined : pidHolding(listeningTcpInodes(port));
}

function tableRows(table: string): string[][] {
  try {
    return readFileSync(table, 'utf8')
      .split('\n')
      .slice(1)
      .map((row) => row.trim().split(/\s+/));
  } catch {
    return [];
  }
}

function listeningTcpInodes(port: number): Set<string> {
  const rows = [...tableRows('/proc/net/tcp'), ...tableRows('/proc/net/tcp6')];
  return new Set(
    rows.filter((cols) => cols.length >= 10 && cols[3] === '0A' && parseInt(cols[1].split(':')[1], 16) === port).map((cols) => cols[9]),
  );
}

/** Columns: Num RefCount Protocol Flags Type St Inode Path; a listening socket has flag __SO_ACCEPTCON (00010000). */
function listeningUnixInodes(socketPath: string): Set<string> {
  return new Set(
    tableRows('/proc/net/unix')
      .filter((cols) => cols.length >= 8 && cols[7] === socketPath && cols[3] === '00010000')
      .map((cols) => cols[6]),
  );
}

function pidHolding(inodes: Set<string>): number | undefined {
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`));
        if (m && inodes.has(m[1])) return Number(entry);
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

/** The port of a redis:// or mongodb:// URL on loopback; undefined for a remote or multi-host URL. */
function loopbackPort(url: string): number | undefined {
  const m = /^[a-z+]+:\/\/(?:[^@/]*@)?(127\.0\.0\.1|localhost|\[::1\]):(\d+)(?:[/?]|$)/.exec(url);
  return m ? Number(m[2]) : undefined;
}

/** CPU seconds of named processes between two snapshots. */
export class CpuMeter {
  private start = new Map<string, number | undefined>();
  private machineStart = machineCpu();
  private wallStart = performance.now();

  constructor(private readonly procs: { name: string; pid: number | undefined }[]) {
    this.reset();
  }

  reset(): void {
    this.wallStart = performance.now();
    this.machineStart = machineCpu();
    for (const p of this.procs) this.start.set(p.name, p.pid === undefined ? undefined : cpuSeconds(p.pid));
  }

  /** Seconds of CPU each process used since reset, the machine's busy fraction and the wall seconds. */
  read(): { byProcess: { name: string; seconds: number | undefined }[]; machineBusy: number; wall: number; cores: number } {
    const m = machineCpu();
    const byProcess = this.procs.map((p) => {
      const before = this.start.get(p.name);
      const after = p.pid === undefined ? undefined : cpuSeconds(p.pid);
      return { name: p.name, seconds: before === undefined || after === undefined ? undefined : after - before };
    });
    const wall = (performance.now() - this.wallStart) / 1000;
    const total = m.total - this.machineStart.total;
    return {
      byProcess,
      machineBusy: total > 0 ? (m.busy - this.machineStart.busy) / total : NaN,
      wall,
      cores: total / Math.max(wall, 1e-9),
    };
  }

  /** CPU ms each process used per wall second since reset (e.g. idle upkeep: timers, BullMQ's checks). */
  perSecond(): string {
    const r = this.read();
    const parts = r.byProcess.map(
      ({ name, seconds }) => `${name} ${seconds === undefined ? 'n/a' : ((1000 * seconds) / r.wall).toFixed(1)}`,
    );
    return `CPU ms per second: ${parts.join(', ')} (over ${r.wall.toFixed(1)} s; machine busy ${(100 * r.machineBusy).toFixed(0)} % of ${Math.round(r.cores)} cores)`;
  }

  /** `agent 1.23, worker1 0.80, ... ms per <unit>; total X; machine busy Y %` */
  perUnit(units: number, unit: string, digits = 2): string {
    return this.measure(units, unit, digits).line;
  }

  /** perUnit's line, and the total it states (CPU ms of all these processes per unit), from one reading. */
  measure(units: number, unit: string, digits = 2): { line: string; totalMs: number } {
    const r = this.read();
    let total = 0;
    const parts = r.byProcess.map(({ name, seconds }) => {
      if (seconds === undefined) return `${name} n/a`;
      total += seconds;
      return `${name} ${((1000 * seconds) / Math.max(units, 1)).toFixed(digits)}`;
    });
    const ours = total / Math.max(r.wall, 1e-9);
    const totalMs = (1000 * total) / Math.max(units, 1);
    return {
      line: `CPU ms per ${unit}: ${parts.join(', ')}; total ${totalMs.toFixed(digits)} (these processes used ${ours.toFixed(2)} cores over ${r.wall.toFixed(1)} s; machine busy ${(100 * r.machineBusy).toFixed(0)} % of ${Math.round(r.cores)} cores)`,
      totalMs,
    };
  }
}

/** Waits until a child's output (as `output` returns it) contains `text`; fails if it exits first or after a minute. */
export async function waitForOutput(child: ChildProcess, text: string, output: () => string): Promise<void> {
  for (let i = 0; !output().includes(text); i++) {
    if (child.exitCode !== null || i > 1200) throw new Error(`process did not start: ${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
