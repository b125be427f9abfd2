import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { Config } from '../../src/shared/infra/config';
import { formatRedisNodes } from '../../src/shared/infra/redis-nodes';
import { sleep } from '../../src/shared/infra/services/process-tools';

const root = path.resolve(__dirname, '..', '..');

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** SIGTERM and wait (graceful); */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash, mid-job. */
  kill(): Promise<void>;
}

/** The Redis of a test's configuration for a child process: the test server, or the Redis Cluster it names. */
export function redisEnv(config: Pick<Config, 'redisClusterNodes' | 'redisUrl'>): Record<string, string | undefined> {
  return config.redisClusterNodes
    ? { REDIS_URL: '', REDIS_CLUSTER_NODES: formatRedisNodes(config.redisClusterNodes) }
    : { REDIS_URL: config.redisUrl ?? process.env.REDIS_URL, REDIS_CLUSTER_NODES: '' };
}

/**
 * A real worker process (the built `dist/workers/main.js`) on the test's database and queue prefix.
 * Resolves once it logs that it is ready.
 */
export async function startWorkerProcess(config: Config, env: Record<string, string> = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [path.join(root, 'dist', 'workers', 'main.js')], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      MONGO_URL: process.env.MONGO_URL,
      ...redisEnv(config),
      MONGO_DB: config.mongoDb,
      QUEUE_PREFIX: config.queuePrefix,
      METRICS_PORT: '0',
      JOB_LOCK_MS: String(config.jobLockMs),
      WORKER_CONCURRENCY: String(config.workerConcurrency),
      RESERVATION_SECONDS: String(config.reservationSeconds),
      AUTHORIZATION_HEADROOM_SECONDS: String(config.authorizationHeadroomSeconds),
      END_CALL_SCAN_SECONDS: String(config.endCallScanSeconds),
      PROCESSING_INLINE: String(config.processingInline),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (let i = 0; !output.includes('worker ready'); i++) {
    if (child.exitCode !== null || i > 600) throw new Error(`worker did not start: ${output}`);
    await sleep(50);
  }
  return {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
