import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { Config } from '../../src/shared/infra/config';
import { sleep, withParentDeathSignal } from '../../src/shared/infra/services/process-tools';
import { testPort } from './ports';

const root = path.resolve(__dirname, '..', '..');

/** A standalone agent process (`node dist/agent/main.js`), as `npm run start:agent` runs it. */
export interface AgentProcess {
  child: ChildProcess;
  /** http://127.0.0.1:<port> */
  url: string;
  output(): string;
  /** POST a JSON body to the agent's REST mirror; `ms` is how long the answer took. */
  rest<T = Record<string, unknown>>(route: string, body: unknown): Promise<{ status: number; body: T; ms: number }>;
  /** SIGTERM and wait (graceful). */
  stop(): Promise<void>;
  /** SIGKILL. */
  kill(): Promise<void>;
}

/**
 * Starts an agent process on the database, queue prefix and servers of `config` (the test's context),
 * on a free port. Resolves once it logs that it is ready. Tokens are dropped from the environment:
 * in NODE_ENV=test the agent is open, as the in-process harness is.
 */
export async function startAgentProcess(config: Config, env: Record<string, string> = {}): Promise<AgentProcess> {
  const port = await testPort('127.0.0.1');
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    MONGO_URL: process.env.MONGO_URL,
    REDIS_URL: process.env.REDIS_URL,
    MONGO_DB: config.mongoDb,
    QUEUE_PREFIX: config.queuePrefix,
    AGENT_PORT: String(port),
    AGENT_TIMEOUT_MS: String(config.agentTimeoutMs),
    ...env,
  };
  delete childEnv.RATING_TOKENS;
  const [command, args] = withParentDeathSignal(process.execPath, [path.join(root, 'dist', 'agent', 'main.js')]);
  const child = spawn(command, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const kill = async () => {
    if (running()) child.kill('SIGKILL');
    await exited;
  };
  for (let i = 0; !output.includes('"msg":"agent ready"'); i++) {
    if (!running() || i > 600) {
      await kill();
      throw new Error(`agent did not start: ${output}`);
    }
    await sleep(50);
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    child,
    url,
    output: () => output,
    rest: async (route, body) => {
      const started = Date.now();
      const response = await fetch(`${url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as never, ms: Date.now() - started };
    },
    stop: async () => {
      if (!running()) return;
      child.kill('SIGTERM');
      // A graceful stop that hangs must not hold the test run: SIGKILL after 10 s.
      if (!(await within(exited, 10_000))) await kill();
    },
    kill,
  };
}

/** Stops every process given (SIGTERM, SIGKILL after `graceMs`), whatever state each is in; never throws. */
export async function stopAll(processes: Array<{ stop(): Promise<unknown>; kill(): Promise<void> }>, graceMs = 10_000): Promise<void> {
  await Promise.all(
    processes.map(async (p) => {
      if (!(await within(p.stop(), graceMs))) await p.kill().catch(() => undefined);
    }),
  );
}

/** Whether `promise` settles without error within `ms` (its timer cleared either way, so nothing lingers). */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
