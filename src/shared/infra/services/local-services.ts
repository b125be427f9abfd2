import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { startMongoServer } from './mongo-server';
import { RunningServer, startRedisServer } from './redis-server';
import { writeServersFile } from './servers-file';

export interface Endpoints {
  mongoUrl: string;
  redisUrl: string;
  /** Stops what this manager started (nothing, when both URLs were given). */
  stop(): Promise<void>;
}

/** What a service gets: no Redis URL when the configuration names a Redis Cluster (REDIS_CLUSTER_NODES), never started here. */
export type ServiceEndpoints = Omit<Endpoints, 'redisUrl'> & { redisUrl: string | undefined };

/** The database and queue prefix a persistent start records for `rating` commands (DATA_DIR/servers.json); default `rating`. */
type Recorded = Partial<Pick<Config, 'mongoDb' | 'queuePrefix'>>;

/**
 * The embedded default: whatever MONGO_URL / REDIS_URL (or REDIS_CLUSTER_NODES) do not name is started here, on loopback,
 * persistent under DATA_DIR (or ephemeral for tests), and stopped with the service. A persistent start records
 * the servers' addresses in DATA_DIR/servers.json until they stop (src/shared/infra/services/servers-file.ts).
 */
export async function startLocalServices(
  config: Pick<Config, 'mongoUrl' | 'redisUrl' | 'dataDir'> & Recorded & { redisClusterNodes?: undefined },
  options: { ephemeral: boolean; logger?: Logger },
): Promise<Endpoints>;
export async function startLocalServices(
  config: Pick<Config, 'mongoUrl' | 'redisUrl' | 'dataDir' | 'redisClusterNodes'> & Recorded,
  options: { ephemeral: boolean; logger?: Logger },
): Promise<ServiceEndpoints>;
export async function startLocalServices(
  config: Pick<Config, 'mongoUrl' | 'redisUrl' | 'dataDir'> & Partial<Pick<Config, 'redisClusterNodes'>> & Recorded,
  options: { ephemeral: boolean; logger?: Logger },
): Promise<ServiceEndpoints> {
  const started: RunningServer[] = [];
  let forget: () => void = () => undefined;
  const stop = async () => {
    forget();
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
    if (!options.ephemeral && started.length > 0) {
      forget = writeServersFile(config.dataDir, {
        mongoUrl: config.mongoUrl ? undefined : `${mongoUrl}/${encodeURIComponent(config.mongoDb ?? 'rating')}`,
        redisUrl: config.redisUrl ? undefined : redisUrl,
        queuePrefix: config.queuePrefix ?? 'rating',
      });
    }
    return { mongoUrl, redisUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
