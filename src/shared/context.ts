import type { Redis } from 'ioredis';
import type { Config } from './config';
import type { Logger } from './logger';
import { connectMongo, ensureIndexes, Mongo } from './mongo';
import { createQueues, Queues } from './queues/queues';
import { createRedis } from './redis';

/**
 * What every process holds open: one Mongo client, one Redis connection, the queues.
 * Created once at start and passed in; never a module-level singleton.
 */
export interface AppContext {
  config: Config;
  logger: Logger;
  mongo: Mongo;
  redis: Redis;
  queues: Queues;
  /** A fresh Redis connection, for users that block on theirs (workers, queue events). */
  newRedis(): Redis;
  close(): Promise<void>;
}

export interface Endpoints {
  mongoUrl: string;
  redisUrl: string;
}

export async function createContext(config: Config, endpoints: Endpoints, logger: Logger): Promise<AppContext> {
  const mongo = await connectMongo(endpoints.mongoUrl, config.mongoDb);
  await ensureIndexes(mongo.collections);
  const redis = createRedis(endpoints.redisUrl);
  redis.on('error', (err) => logger.warn({ err }, 'redis connection error'));
  const extra: Redis[] = [];
  const queues = createQueues(redis, config.queuePrefix);
  return {
    config,
    logger,
    mongo,
    redis,
    queues,
    newRedis: () => {
      const connection = createRedis(endpoints.redisUrl);
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
