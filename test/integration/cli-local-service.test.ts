import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sleep } from '../../src/shared/infra/services/process-tools';
import { testPorts } from '../support/ports';
import { SERVERS_FILE, type ServersRecord } from '../../src/shared/infra/services/servers-file';
import { ServiceProcess } from '../support/service-process';
import { uniqueName } from '../support/harness';

const root = path.resolve(__dirname, '..', '..');
const sample = path.join(root, 'examples', 'calls.csv');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Settings that would point a command somewhere else than a newcomer's: none of them is set in the flow. */
const SERVER_SETTINGS = /^(MONGO_|REDIS_|QUEUE_PREFIX$|NODE_ENV$|LOG_LEVEL$|RATING_TOKENS$)/;

/** The environment of a second terminal: no server variable, the service's DATA_DIR (as `npm start` from the same folder). */
function terminal(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (SERVER_SETTINGS.test(name)) delete env[name];
  return { ...env, DATA_DIR: dataDir, NPM_CONFIG_UPDATE_NOTIFIER: 'false', ...extra };
}

/** `npx rating ...` from the repository, as README's quick start runs it (--no-install: never fetched from a registry). */
function rating(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Run> {
  const child = spawn('npx', ['--no-install', 'rating', ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

const hint = (dataDir: string, variables: string, why = '') =>
  `no service is running with DATA_DIR=${dataDir}${why}: start the service with \`npm start\` in another terminal from this folder (same DATA_DIR), or set ${variables} as the service uses them`;

const readRecord = (dataDir: string) => JSON.parse(readFileSync(path.join(dataDir, SERVERS_FILE), 'utf8')) as ServersRecord;

/**
 * Issue 38: README's two-terminal quick start, on the built service with its own DATA_DIR. `npm start`
 * in one terminal; in another, with no MONGO_URL/REDIS_URL, `npx rating demo`, `npx rating import
 * examples/calls.csv` and `npx rating audit` use its local servers. Once it stopped, the commands print
 * the one-line hint and fail.
 */
describe('rating commands and the local servers of npm start', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rating-quickstart-'));
  const dataDir = path.join(dir, 'data'); // where ServiceProcess puts the service's DATA_DIR
  const service = new ServiceProcess();

  afterAll(async () => {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('import of the shipped sample and the audit succeed with no variable set; with the service stopped they print the hint and fail', async () => {
    await service.start({ dir, logName: 'service', env: {} });
    const record = readRecord(dataDir);
    expect(record.mongoUrl).toBe(`${service.mongoUrl}/rating`);
    expect(record.redisUrl).toMatch(/^(unix|redis):\/\//);
    const env = terminal(dataDir);
    const using = `using the local servers of npm start (pid ${record.pid}, DATA_DIR=${dataDir}): MongoDB ${record.mongoUrl}`;

    const demo = await rating(env, 'demo');
    expect(demo).toMatchObject({ code: 0, stderr: `${using}, Redis ${record.redisUrl}\n` });
    expect(demo.stdout).toBe(
      'demo: carriers 1 created, 0 already there; pricelists 1 created, 0 already there; rates 6 created, 0 already there; accounts 2 created, 0 already there\n',
    );

    const imported = await rating(env, 'import', sample);
    expect(imported.stderr).toBe(`${using}, Redis ${record.redisUrl}\n`);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/^lines:\s+10$/m);
    expect(imported.stdout).toMatch(/^rejected:\s+0 /m);
    expect(imported.stdout).toMatch(/^rated:\s+10$/m);
    expect(imported.stdout).toMatch(/^charged:\s+94$/m);
    expect(existsSync(`${sample}.rejects.csv`)).toBe(false);

    const audit = await rating(env, 'audit');
    expect(audit).toMatchObject({ code: 0, stderr: `${using}\n` });
    expect(audit.stdout).toMatch(/^accounts:\s+2$/m);
    expect(audit.stdout).toMatch(/^engine records:\s+10$/m);
    expect(audit.stdout).toMatch(/^differences:\s+0$/m);

    // The same demo and file again change nothing.
    expect((await rating(env, 'demo')).stdout).toContain('accounts 0 created, 2 already there');
    expect((await rating(env, 'import', sample)).stdout).toMatch(/^duplicates:\s+10 /m);

    await service.stop();
    expect(existsSync(path.join(dataDir, SERVERS_FILE))).toBe(false);
    for (const [args, variables] of [
      [['import', sample], 'MONGO_URL and REDIS_URL'],
      [['audit'], 'MONGO_URL'],
    ] as const) {
      const stopped = await rating(env, ...args);
      expect(stopped).toEqual({ code: 2, stdout: '', stderr: `${hint(dataDir, variables)}\n` });
    }
  }, 300_000);
});

/** Every process below `pid`, from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // ended meanwhile
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

describe('a servers file the commands must not trust', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rating-stale-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('left by a killed npm start (its pid is gone): the hint', async () => {
    const dataDir = path.join(dir, 'killed');
    const [apiPort, agentPort] = await testPorts(2);
    const env = terminal(dataDir, { API_PORT: String(apiPort), AGENT_PORT: String(agentPort), LOG_LEVEL: 'info' });
    const child: ChildProcess = spawn(process.execPath, [path.join(root, 'dist', 'main.js')], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    let servers: number[] = [];
    try {
      const until = Date.now() + 240_000; // a bound on a hung start, not a measure
      while (!output.includes('"msg":"rating ready"')) {
        if (child.exitCode !== null) throw new Error(`the service exited before it was ready: ${output}`);
        if (Date.now() > until) throw new Error(`the service was not ready within 240 s: ${output}`);
        await sleep(100);
      }
      expect(readRecord(dataDir).pid).toBe(child.pid);
      servers = descendants(child.pid!);
      child.kill('SIGKILL');
      await exited;
      expect(readRecord(dataDir).pid).toBe(child.pid); // nothing ran to remove it

      const audit = await rating(terminal(dataDir), 'audit');
      const file = path.join(path.resolve(dataDir), SERVERS_FILE);
      expect(audit).toEqual({
        code: 2,
        stdout: '',
        stderr: `${hint(dataDir, 'MONGO_URL', ` (${file} is left from pid ${child.pid}, which is gone)`)}\n`,
      });
    } finally {
      child.kill('SIGKILL');
      // Without setpriv the local servers outlive a SIGKILLed service (the MongoDB-wire launcher exits when its stdin closes).
      for (const pid of servers) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
    }
  }, 300_000);

  /** A servers file naming this (live) test process and free ports where nothing listens. */
  async function silentServers(name: string): Promise<{ dataDir: string; file: string }> {
    const dataDir = path.join(dir, name);
    mkdirSync(dataDir, { recursive: true });
    const [mongoPort, redisPort] = await testPorts(2);
    const record: ServersRecord = {
      pid: process.pid,
      mongoUrl: `mongodb://127.0.0.1:${mongoPort}/rating`,
      redisUrl: `redis://127.0.0.1:${redisPort}`,
      queuePrefix: 'rating',
      startedAt: new Date().toISOString(),
    };
    const file = path.join(dataDir, SERVERS_FILE);
    writeFileSync(file, JSON.stringify(record));
    return { dataDir, file };
  }

  it('naming a live process whose servers do not answer: says so, and fails', async () => {
    const { dataDir, file } = await silentServers('silent');
    const run = await rating(terminal(dataDir), 'import', sample);
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: `the servers of the service running with DATA_DIR=${dataDir} (pid ${process.pid}, ${file}) do not answer: wait until it is ready, or start it again with \`npm start\`\n`,
    });
  });

  it('MONGO_URL from the environment wins over the file', async () => {
    const { dataDir } = await silentServers('env-wins');
    const run = await rating(terminal(dataDir, { MONGO_URL: process.env.MONGO_URL as string, MONGO_DB: uniqueName('envwins') }), 'audit');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^accounts:\s+0$/m);
  });
});
