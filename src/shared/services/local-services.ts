import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { startMongoServer } from './mongo-server';
import { RunningServer, startRedisServer } from './redis-server';

export interface Endpoints {
  mongoUrl: string;
  redisUrl: string;
  /** Stops what this manager started (nothing, when both URLs were given). */
  stop(): Promise<void>;
}

/** What a service gets: no Redis URL when the configuration names a Redis Cluster (REDIS_CLUSTER_NODES), never started here. */
export type ServiceEndpoints = Omit<Endpoints, 'redisUrl'> & { redisUrl: string | undefined };

/**
 * The embedded default: whatever MONGO_URL / REDIS_URL (or REDIS_CLUSTER_NODES) do not name is started here, on loopback,
 * persistent under DATA_DIR (or ephemeral for tests), and stopped with the service.
 */
export async function startLocalServices(
  config: Pick<Config, 'mongoUrl' | 'redisUrl' | 'dataDir'> & { redisClusterNodes?: undefined },
  options: { ephemeral: boolean; logger?: Logger },
): Promise<Endpoints>;
export async function startLocalServices(
  config: Pick<Config, 'mongoUrl' | 'redisUrl' | 'dataDir' | 'redisClusterNodes'>,
  options: { ephemeral: boolean; logger?: Logger },
): Promise<ServiceEndpoints>;
export async function startLocalServices(
  config: Pick<Config, 'mongoUrl' | 'redisUrl' | 'dataDir'> & Partial<Pick<Config, 'redisClusterNodes'>>,
  options: { ephemeral: boolean; logger?: Logger },
): Promise<ServiceEndpoints> {
  const started: RunningServer[] = [];
  const stop = async () => {
    await Promise.allSettled(started.map((s) => s.stop()));
  };
  try {
    const [mongoUrl, redisUrl] = await Promise.all([
      config.mongoUrl ??
        startMongoServer({
          host: '127.0.0.1',
          dataDir: options.ephemeral ? undefined : path.join(config.dataDir, 'mongo'),
          logger: options.logger,
        }).then((s) => (started.push(s), s.url)),
      // A Redis Cluster is never started here: REDIS_CLUSTER_NODES names one that runs.
      config.redisUrl ??
        (config.redisClusterNodes
          ? undefined
          : startRedisServer({
              host: '127.0.0.1',
              dataDir: options.ephemeral ? undefined : path.join(config.dataDir, 'redis'),
              logger: options.logger,
            }).then((s) => (started.push(s), s.url))),
    ]);
    return { mongoUrl, redisUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
