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

/**
 * The embedded default: whatever MONGO_URL / REDIS_URL do not name is started here, on loopback,
 * persistent under DATA_DIR (or ephemeral for tests), and stopped with the service.
 */
export async function startLocalServices(
  config: Pick<Config, 'mongoUrl' | 'redisUrl' | 'dataDir'>,
  options: { ephemeral: boolean; logger?: Logger },
): Promise<Endpoints> {
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
      config.redisUrl ??
        startRedisServer({
          host: '127.0.0.1',
          dataDir: options.ephemeral ? undefined : path.join(config.dataDir, 'redis'),
          logger: options.logger,
        }).then((s) => (started.push(s), s.url)),
    ]);
    return { mongoUrl, redisUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
