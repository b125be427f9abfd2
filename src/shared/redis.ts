import { Redis } from 'ioredis';

/**
 * BullMQ needs `maxRetriesPerRequest: null` on connections used by workers (blocking commands);
 * the same options are fine for everything else, so one factory serves all.
 */
export function createRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false });
}

export async function pingRedis(redis: Redis): Promise<boolean> {
  try {
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  }
}
