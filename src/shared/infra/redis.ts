import { Cluster, Redis, RedisOptions } from 'ioredis';
import type { RedisNode } from './redis-nodes';
import { withTimeout } from './time-limit';

/**
 * A connection to Redis: one server (`Redis`) or a Redis Cluster (`Cluster`, REDIS_CLUSTER_NODES).
 * Both speak the same commands; the code uses only single-key commands and single-key scripts outside
 * BullMQ, whose keys share one hash slot per deployment (bullmqPrefix, src/shared/domain/queues/queues.ts),
 * so nothing depends on which of the two it is.
 */
export type RedisClient = Redis | Cluster;

/** Where Redis is: a URL (one server) or the seed nodes of a cluster. */
export type RedisTarget = { url: string } | { cluster: RedisNode[] };

/**
 * BullMQ needs `maxRetriesPerRequest: null` on connections used by workers (blocking commands);
 * the same options are fine for everything else, so one factory serves all. For a cluster they are
 * the per-node options (`redisOptions`): ioredis discovers the other nodes from the seeds and follows
 * MOVED/ASK redirections and failovers.
 */
export function createRedis(target: RedisTarget | string, connectionName?: string): RedisClient {
  const options: RedisOptions = {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    lazyConnect: false,
    ...(connectionName ? { connectionName } : {}),
  };
  if (typeof target === 'string') return connectTo(target, options);
  if ('url' in target) return connectTo(target.url, options);
  return new Cluster(target.cluster, {
    redisOptions: options,
    enableReadyCheck: true,
    lazyConnect: false,
    // Keep retrying the cluster (as a single server's connection does) rather than giving up.
    clusterRetryStrategy: (times) => Math.min(100 + times * 200, 2000),
  });
}

/**
 * One server's connection. `unix:///path/to/redis.sock` names a server on the same machine by its
 * socket, which saves the loopback TCP stack on every command (docs/DECISIONS.md, "Redis over a Unix
 * socket"); `?db=N` picks the database. ioredis itself reads a bare path only.
 */
export function connectTo(url: string, options: RedisOptions): Redis {
  if (!url.startsWith('unix:')) return new Redis(url, options);
  const parsed = new URL(url);
  const db = parsed.searchParams.get('db');
  return new Redis({ path: decodeURIComponent(parsed.pathname), ...(db ? { db: Number(db) } : {}), ...options });
}

/** The `unix://` URL of a socket path (each segment percent-encoded: a path may hold `?`, `#` or `%`). */
export function socketUrl(socketPath: string, db?: number): string {
  return `unix://${socketPath.split('/').map(encodeURIComponent).join('/')}${db ? `?db=${db}` : ''}`;
}

export function isCluster(redis: RedisClient): redis is Cluster {
  return redis instanceof Cluster;
}

const PING_TIMEOUT_MS = 2000;

async function pingOne(redis: Redis | Cluster): Promise<boolean> {
  try {
    return (await withTimeout(redis.ping(), PING_TIMEOUT_MS)) === 'PONG';
  } catch {
    return false;
  }
}

/**
 * Redis answers. For a cluster: every master answers, and there is at least one (a master down
 * means some hash slots, and so some queues or keys, are unreachable until a replica takes over).
 */
export async function pingRedis(redis: RedisClient): Promise<boolean> {
  if (!isCluster(redis)) return pingOne(redis);
  if (redis.status !== 'ready') return false;
  const masters = redis.nodes('master');
  if (masters.length === 0) return false;
  const answers = await Promise.all(masters.map((node) => pingOne(node)));
  return answers.every(Boolean);
}

/**
 * The keys matching `pattern` on every master (KEYS on a cluster client asks one node only).
 * For tests and tools, never a hot path.
 */
export async function keysEverywhere(redis: RedisClient, pattern: string): Promise<string[]> {
  const nodes: Redis[] = isCluster(redis) ? redis.nodes('master') : [redis];
  const found = await Promise.all(nodes.map((node) => node.keys(pattern)));
  return found.flat();
}

/** Deletes keys one by one (on a cluster a multi-key DEL must stay within one slot). */
export async function deleteKeys(redis: RedisClient, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  if (!isCluster(redis)) {
    await redis.del(...keys);
    return;
  }
  await Promise.all(keys.map((key) => redis.del(key)));
}

/** How long a closing connection waits for Redis to answer its QUIT. */
const QUIT_WAIT_MS = 2000;

/**
 * Closes a connection: QUIT (what is in flight is answered first), or, when Redis does not answer it in
 * time, the socket dropped. While Redis is unreachable ioredis holds commands in its offline queue and
 * QUIT waits behind them for good: a service stopped then would never finish stopping.
 */
export async function closeRedis(connection: RedisClient, waitMs = QUIT_WAIT_MS): Promise<void> {
  const quitted = await withTimeout(
    connection.quit().then(
      () => true,
      () => false,
    ),
    waitMs,
  );
  if (quitted !== true) connection.disconnect();
}
