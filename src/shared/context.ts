import type { Config } from './config';
import type { Logger } from './logger';
import { connectMongo, ensureIndexes, Mongo, writeConcernOf } from './mongo';
import { bullmqPrefix, createQueues, Queues } from './queues/queues';
import { createRedis, RedisClient, RedisTarget } from './redis';

/**
 * What every process holds open: one Mongo client, one Redis connection, the queues.
 * Created once at start and passed in; never a module-level singleton.
 */
export interface AppContext {
  config: Config;
  logger: Logger;
  mongo: Mongo;
  /** One Redis server or a Redis Cluster (REDIS_CLUSTER_NODES): src/shared/redis.ts. */
  redis: RedisClient;
  queues: Queues;
  /** A fresh Redis connection, for users that block on theirs (workers, queue events, subscribers). */
  newRedis(): RedisClient;
  close(): Promise<void>;
}

export interface Endpoints {
  mongoUrl: string;
  /** The Redis server; ignored (and may be undefined) when the configuration names a Redis Cluster. */
  redisUrl: string | undefined;
}

/** A Redis Cluster when REDIS_CLUSTER_NODES is set (never started locally), else the server at redisUrl. */
export function redisTarget(config: Pick<Config, 'redisClusterNodes'>, redisUrl: string | undefined): RedisTarget {
  if (config.redisClusterNodes) return { cluster: config.redisClusterNodes };
  if (!redisUrl) throw new Error('no Redis: set REDIS_URL (one server) or REDIS_CLUSTER_NODES (a cluster)');
  return { url: redisUrl };
}

/**
 * Makes `quit` idempotent: the first call sends QUIT, later ones share its answer. The owner of an extra
 * connection (a subscriber, a worker) quits it when it closes, and the context quits every extra
 * connection again when it closes: that second QUIT, written after the server had closed the connection
 * on the first but before the client noticed, failed with `write EPIPE` (a warning on every Ctrl-C).
 */
function quitOnce(connection: RedisClient): RedisClient {
  const quit = connection.quit.bind(connection) as () => Promise<'OK'>;
  let quitting: Promise<'OK'> | undefined;
  const once = (callback?: (err?: Error | null, result?: 'OK') => void): Promise<'OK'> => {
    quitting ??= quit();
    if (callback)
      quitting.then(
        (result) => callback(null, result),
        (err: Error) => callback(err),
      );
    return quitting;
  };
  (connection as { quit: typeof once }).quit = once;
  return connection;
}

export async function createContext(config: Config, endpoints: Endpoints, logger: Logger): Promise<AppContext> {
  const mongo = await connectMongo(endpoints.mongoUrl, config.mongoDb, { writeConcern: writeConcernOf(config) });
  await ensureIndexes(mongo.collections);
  const target = redisTarget(config, endpoints.redisUrl);
  const redis = createRedis(target);
  redis.on('error', (err) => logger.warn({ err }, 'redis connection error'));
  const extra: RedisClient[] = [];
  const queues = createQueues(redis, bullmqPrefix(config));
  return {
    config,
    logger,
    mongo,
    redis,
    queues,
    newRedis: () => {
      const connection = quitOnce(createRedis(target));
      connection.on('error', (err) => logger.warn({ err }, 'redis connection error'));
      extra.push(connection);
      return connection;
    },
    close: async () => {
      await queues.close();
      await Promise.allSettled(extra.map((c) => c.quit()));
      await redis.quit().catch(() => undefined);
      await mongo.close();
    },
  };
}
