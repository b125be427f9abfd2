import type { Config } from '../shared/config';

/**
 * The servers a CLI command that changes data talks to: the service's own (MONGO_URL and REDIS_URL or
 * REDIS_CLUSTER_NODES), never local ones of its own. Null, with the reason on stderr, when unset.
 */
export function serviceServers(config: Config): { mongoUrl: string; redisUrl: string | undefined } | null {
  if (!config.mongoUrl || (!config.redisUrl && !config.redisClusterNodes)) {
    console.error('MONGO_URL and REDIS_URL (or REDIS_CLUSTER_NODES) must be set: the command talks to the same servers as the service');
    return null;
  }
  return { mongoUrl: config.mongoUrl, redisUrl: config.redisUrl };
}
