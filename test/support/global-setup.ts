import { startLocalServices } from '../../src/shared/infra/services/local-services';

/**
 * One Redis and one MongoDB-wire server for the whole run (ephemeral), unless MONGO_URL / REDIS_URL
 * name servers to use. Test files isolate themselves by database name and queue prefix.
 */
export default async function globalSetup(): Promise<void> {
  const services = await startLocalServices(
    { mongoUrl: process.env.MONGO_URL || undefined, redisUrl: process.env.REDIS_URL || undefined, dataDir: '' },
    { ephemeral: true },
  );
  process.env.MONGO_URL = services.mongoUrl;
  process.env.REDIS_URL = services.redisUrl;
  (globalThis as { __ratingServices?: typeof services }).__ratingServices = services;
}
