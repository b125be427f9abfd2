import type { Config } from './config';
import type { Logger } from './logger';
import type { MongoConnection } from './mongo';
import type { RedisClient, RedisTarget } from './redis';

/**
 * What the infrastructure of a process needs from its context: the configuration, the logger, the
 * storage clients. The domain's context (src/shared/domain/context.ts AppContext) is one of these
 * with typed collections and the queues; infrastructure code takes this narrower view, so it never
 * depends on the domain.
 */
export interface ServiceContext {
  config: Config;
  logger: Logger;
  mongo: MongoConnection;
  /** One Redis server or a Redis Cluster (REDIS_CLUSTER_NODES): src/shared/infra/redis.ts. */
  redis: RedisClient;
  /**
   * A fresh Redis connection, for users that block on theirs (workers, queue events, subscribers);
   * `name` is its CLIENT SETNAME, set again on every reconnect (CLIENT LIST shows who holds what).
   */
  newRedis(name?: string): RedisClient;
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
export function quitOnce(connection: RedisClient): RedisClient {
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
