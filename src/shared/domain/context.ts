import type { Config } from '../infra/config';
import type { Logger } from '../infra/logger';
import { writeConcernOf } from '../infra/mongo';
import { closeRedis, createRedis, RedisClient } from '../infra/redis';
import { quitOnce, redisTarget, type Endpoints, type ServiceContext } from '../infra/service-context';
import { bullmqPrefix, createQueues, Queues } from './queues/queues';
import { connectMongo, ensureIndexes, Mongo } from './store';

/**
 * What every process holds open: one Mongo client with the domain's collections, one Redis
 * connection, the queues. Created once at start and passed in; never a module-level singleton.
 */
export interface AppContext extends ServiceContext {
  mongo: Mongo;
  queues: Queues;
  close(): Promise<void>;
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
    newRedis: (name?: string) => {
      const connection = quitOnce(createRedis(target, name));
      connection.on('error', (err) => logger.warn({ err }, 'redis connection error'));
      extra.push(connection);
      return connection;
    },
    close: async () => {
      await queues.close();
      await Promise.all(extra.map((c) => closeRedis(c)));
      await closeRedis(redis);
      await mongo.close();
    },
  };
}
