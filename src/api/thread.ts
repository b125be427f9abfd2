import { once } from 'node:events';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Redis } from 'ioredis';
import type { RoleHandle } from '../shared/domain/boot';
import { loadConfig } from '../shared/infra/config';
import { AppContext, createContext } from '../shared/domain/context';
import { Endpoints } from '../shared/infra/service-context';
import { createLogger } from '../shared/infra/logger';
import { socketUrl } from '../shared/infra/redis';
import { buildApi } from './app';

/**
 * Single-machine mode (`npm start`) runs the management API in a worker thread of the one process:
 * its own event loop and its own heap. The most expensive query the limits allow (hundreds of
 * thousands of records read, answers of megabytes) then costs the API's thread its time and its
 * garbage collections, and never holds the event loop that the agent and the workers answer calls
 * on (issue 10; measured in docs/BENCHMARKS.md). The thread has its own connections (its context),
 * to the servers the process started or was given.
 */
export async function startApiThread(ctx: AppContext): Promise<RoleHandle> {
  // A Redis Cluster is named by the configuration (REDIS_CLUSTER_NODES), which the thread reads too.
  const redisUrl = ctx.config.redisClusterNodes ? undefined : (ctx.config.redisUrl ?? redisUrlOf(ctx.redis as Redis));
  const endpoints: Endpoints = { mongoUrl: ctx.mongo.url, redisUrl };
  const worker = new Worker(__filename, { workerData: { role: 'api', endpoints } });
  let closing = false;
  const exited = once(worker, 'exit');
  await new Promise<void>((resolve, reject) => {
    worker.once('message', (message: { ready?: true; error?: string }) =>
      message.ready ? resolve() : reject(new Error(`API thread: ${message.error}`)),
    );
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`API thread exited (${code}) before it was ready`)));
  });
  worker.on('error', (err) => ctx.logger.error({ err }, 'API thread failed'));
  worker.once('exit', (code) => {
    if (closing) return;
    // Without its API the process is not what it claims to be: stop it (the process manager restarts it).
    ctx.logger.fatal({ code }, 'API thread exited: stopping');
    process.kill(process.pid, 'SIGTERM');
  });
  return {
    close: async () => {
      closing = true;
      worker.postMessage('close');
      await exited;
    },
  };
}

/** The URL of the Redis server a connection talks to (the local server: no password, no TLS). */
function redisUrlOf(redis: Redis): string {
  const { host, port, db, username, password, tls, path } = redis.options;
  if (path) return socketUrl(path, db);
  const auth = password ? `${encodeURIComponent(username ?? '')}:${encodeURIComponent(password)}@` : '';
  return `${tls ? 'rediss' : 'redis'}://${auth}${host ?? '127.0.0.1'}:${port ?? 6379}/${db ?? 0}`;
}

async function runThread(endpoints: Endpoints): Promise<void> {
  const port = parentPort!;
  const config = loadConfig();
  const logger = createLogger(config, 'rating-api');
  let ctx: AppContext | undefined;
  try {
    ctx = await createContext(config, endpoints, logger);
    const app = await buildApi(ctx);
    await app.listen({ host: config.host, port: config.apiPort });
    const started = ctx;
    port.on('message', (message) => {
      if (message !== 'close') return;
      void (async () => {
        await app.close().catch((err: unknown) => logger.error({ err }, 'closing the API failed'));
        await started.close().catch((err: unknown) => logger.error({ err }, 'closing the API connections failed'));
        process.exit(0); // in a worker thread: ends this thread only
      })();
    });
    port.postMessage({ ready: true });
  } catch (err) {
    await ctx?.close().catch(() => undefined);
    port.postMessage({ error: (err as Error).message });
    process.exit(1);
  }
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === 'api') {
  void runThread((workerData as { endpoints: Endpoints }).endpoints);
}
