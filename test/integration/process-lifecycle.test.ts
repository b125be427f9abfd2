import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sleep } from '../../src/shared/infra/services/process-tools';
import { testPorts } from '../support/ports';

const root = path.resolve(__dirname, '..', '..');

/** Every process below `pid`, read from /proc (no dependency on ps being installed). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (field 2) may hold spaces; the parent pid follows its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended while we looked
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of parents.get(parent) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitReady(url: string, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`service exited early (${child.exitCode}): ${log()}`);
    try {
      if ((await fetch(`${url}/ready`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`not ready in time: ${log()}`);
}

/**
 * `npm start` without MONGO_URL/REDIS_URL: the built single-machine entry point starts its own
 * persistent servers under DATA_DIR, answers /ready on both ports, and leaves nothing behind on SIGINT.
 */
describe('single-machine process (dist/main.js)', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'rating-start-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts with local servers under DATA_DIR, is ready on both ports and stops cleanly', async () => {
    const [apiPort, agentPort] = await testPorts(2);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      API_PORT: String(apiPort),
      AGENT_PORT: String(agentPort),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      NODE_ENV: 'development',
    };
    delete env.MONGO_URL;
    delete env.REDIS_URL;
    const child = spawn(process.execPath, [path.join(root, 'dist', 'main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    await waitReady(`http://127.0.0.1:${apiPort}`, child, () => output);
    await waitReady(`http://127.0.0.1:${agentPort}`, child, () => output);
    const children = descendants(child.pid!);
    expect(children.length).toBeGreaterThanOrEqual(2); // redis-server and the MongoDB-wire server

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    for (let i = 0; i < 50 && children.some(alive); i++) await sleep(100);
    expect(children.filter(alive)).toEqual([]);
    expect(output).toContain('stopped');
  }, 180000);

  /**
   * Issue 32: a newcomer's start and Ctrl-C print the service's own logs and nothing that reads as
   * broken. Ctrl-C in a terminal sends SIGINT to the whole foreground process group (the service and
   * the servers it started), so the service runs in a group of its own and the group gets the signal.
   * Every line must be one of the service's JSON log lines, none at warn or above except the advice a
   * development setup without tokens or alert channels is meant to see.
   */
  it('prints no warning or error from start to Ctrl-C (SIGINT to its process group)', async () => {
    const [apiPort, agentPort] = await testPorts(2);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      API_PORT: String(apiPort),
      AGENT_PORT: String(agentPort),
      DATA_DIR: path.join(dataDir, 'quiet'),
      LOG_LEVEL: 'info',
      NODE_ENV: 'development',
    };
    for (const name of ['MONGO_URL', 'REDIS_URL', 'RATING_TOKENS', 'SMTP_URL', 'SMS_GATEWAY_URL', 'ALERT_WEBHOOK_URL', 'NODE_OPTIONS'])
      delete env[name];
    const child = spawn(process.execPath, [path.join(root, 'dist', 'main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitReady(`http://127.0.0.1:${apiPort}`, child, () => output);
      await waitReady(`http://127.0.0.1:${agentPort}`, child, () => output);
      process.kill(-child.pid!, 'SIGINT');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    }

    const advice = [/^no API tokens configured: /, /^no alert channel configured /];
    const unexpected = output
      .split('\n')
      .filter((line) => line.trim() !== '')
      .filter((line) => {
        let entry: { level?: unknown; msg?: unknown };
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch {
          return true; // not a log line of the service: a runtime warning, a stack trace, a child's output
        }
        if (entry.level === 'info' || entry.level === 'debug' || entry.level === 'trace') return false;
        return !(entry.level === 'warn' && advice.some((a) => a.test(String(entry.msg))));
      });
    expect(unexpected).toEqual([]);
    expect(output).toContain('"msg":"stopped"');
  }, 180000);
});
