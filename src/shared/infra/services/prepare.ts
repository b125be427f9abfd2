/**
 * `npm test` runs this first: it installs redis-server and builds the MongoDB-wire launcher when
 * they are needed and missing, so a fresh machine needs no other step.
 */
import { createLogger } from '../logger';
import { ensureLauncherJar } from './mongo-server';
import { ensureRedisServer } from './redis-server';
import { which } from './process-tools';

const logger = createLogger({ logLevel: 'info' }, 'prepare');
try {
  // The package brings redis-tools (redis-cli) too, which the Redis Cluster test uses to create its cluster.
  if (!process.env.REDIS_URL) ensureRedisServer(logger);
  if (!process.env.MONGO_URL && !which('mongod')) ensureLauncherJar(logger);
} catch (err) {
  logger.fatal((err as Error).message);
  process.exit(1);
}
