import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import path from 'node:path';
import { sleep, withParentDeathSignal } from '../../src/shared/infra/services/process-tools';
import { testPorts } from './ports';

const ROOT = path.resolve(__dirname, '..', '..');
const HOST = '127.0.0.1';

/** Settings a caller's environment may hold that would change the service under test: dropped, so it runs on its defaults. */
const SERVICE_SETTINGS =
  /^(MONGO_|REDIS_|GRAPHQL_|RATE_LIMIT_|API_|BODY_LIMIT|QUEUE_PREFIX|AGENT_TIMEOUT|RECORD_BATCH|AUTH_CACHE|LONG_CALL|JOB_LOCK|WORKER_CONCURRENCY|PROCESSING_|AUDIT_INTERVAL)/;

export interface ServiceProcessOptions {
  /** Temp directory: the service's DATA_DIR goes under it, and its log as `<logName>.log`. */
  dir: string;
  logName: string;
  /** RATING_TOKENS and any setting to override (applied after the defaults are restored). */
  env: Record<string, string>;
  /** Every line the service prints, as it prints it. */
  onLine?: (line: string) => void;
}

/**
 * The service as a newcomer starts it (`npm start`, i.e. `node dist/main.js`: API, agent and workers in
 * one process, with its own local Redis and MongoDB-wire servers under DATA_DIR), on free ports. For the
 * standalone harnesses that drive it from outside (test/fuzz, bench/agent-under-api.ts).
 */
export class ServiceProcess {
  apiUrl = '';
  agentUrl = '';
  /** The local MongoDB-wire server it started, from its log. */
  mongoUrl = '';
  mongoKind = '';
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  async start(options: ServiceProcessOptions): Promise<void> {
    const main = path.join(ROOT, 'dist', 'main.js');
    if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build first`);
    const [apiPort, agentPort] = await testPorts(2, HOST);
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of Object.keys(env)) if (SERVICE_SETTINGS.test(name)) delete env[name];
    Object.assign(env, {
      NODE_ENV: 'development',
      HOST,
      API_PORT: String(apiPort),
      AGENT_PORT: String(agentPort),
      DATA_DIR: path.join(options.dir, 'data'),
      LOG_LEVEL: 'info',
      ...options.env,
    });
    const [command, args] = withParentDeathSignal(process.execPath, [main]);
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const log = createWriteStream(path.join(options.dir, `${options.logName}.log`));
    let tail = '';
    let pending = '';
    let ready = false;
    const onData = (chunk: Buffer) => {
      log.write(chunk);
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        tail = (tail + line + '\n').slice(-4000);
        const started = /local (MongoDB-wire server|mongod) started/.exec(line);
        if (started) {
          this.mongoKind = started[1] === 'mongod' ? 'mongod' : 'mongo-java-server (H2 file backend, as npm start)';
          this.mongoUrl = /"url":"(mongodb:\/\/[^"]+)"/.exec(line)?.[1] ?? this.mongoUrl;
        }
        if (line.includes('"msg":"rating ready"')) ready = true;
        options.onLine?.(line);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    const until = Date.now() + 240_000;
    while (!ready) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`the service exited before it was ready; last output:\n${tail}`);
      if (Date.now() > until) throw new Error(`the service was not ready within 240 s; last output:\n${tail}`);
      await sleep(100);
    }
    this.apiUrl = `http://${HOST}:${apiPort}`;
    this.agentUrl = `http://${HOST}:${agentPort}`;
  }

  /** SIGTERM (the service stops its local servers), SIGKILL if it takes too long. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const stopped = await Promise.race([this.exited.then(() => true), sleep(30_000).then(() => false)]);
    if (!stopped) {
      child.kill('SIGKILL');
      await Promise.race([this.exited, sleep(5000)]);
    }
  }
}
