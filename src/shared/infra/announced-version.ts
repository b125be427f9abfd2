import { randomInt } from 'node:crypto';
import type { ServiceContext } from './service-context';
import { closeRedis, type RedisClient } from './redis';

/**
 * Data that processes keep in memory and others change: every committed change bumps a version in
 * Redis and announces it on a channel. A holder re-reads the version after an announcement, and also
 * when it last read it longer than a quiet period ago, in case a message was missed (a reconnect, a
 * Redis failover). Redis Cluster: one key (INCR, GET) and a pub/sub channel, which a cluster
 * broadcasts to every node.
 */
export type ChangeTopic =
  /** Carriers, pricelists and rates (src/shared/domain/rating-data/cache.ts). */
  | 'rating-data'
  /** What rating reads of an account: active, pricelists, carriers, links; and its existence (src/workers/imports/account-cache.ts). */
  | 'account-settings';

const versionKey = (prefix: string, topic: ChangeTopic) => `${prefix}:${topic}:version`;
const channel = (prefix: string, topic: ChangeTopic) => `${prefix}:${topic}:changed`;

/**
 * The version key, created at a random start when missing, then `incr` (the next version) or `get` (the
 * version as it stands). Redis may lose its data (a restart without persistence): a count begun again at
 * 1, or a missing key read as a constant '0', could name a version a holder already has, and that holder
 * would keep the old data for good.
 */
const VERSION = `if redis.call('exists', KEYS[1]) == 0 then redis.call('set', KEYS[1], ARGV[1]) end
return redis.call(ARGV[2], KEYS[1])`;

function versionCommand(ctx: Pick<ServiceContext, 'redis' | 'config'>, topic: ChangeTopic, command: 'incr' | 'get'): Promise<unknown> {
  return ctx.redis.eval(VERSION, 1, versionKey(ctx.config.queuePrefix, topic), String(randomInt(1, 2 ** 47)), command);
}

/** Call after any committed change of the topic's data. */
export async function announceChange(ctx: Pick<ServiceContext, 'redis' | 'config'>, topic: ChangeTopic): Promise<void> {
  const version = await versionCommand(ctx, topic, 'incr');
  await ctx.redis.publish(channel(ctx.config.queuePrefix, topic), String(version));
}

export class AnnouncedVersion {
  private version: string | undefined;
  private stale = true;
  private checkedAt = 0;
  private reading: Promise<string> | undefined;

  private constructor(
    private readonly ctx: Pick<ServiceContext, 'redis' | 'config'>,
    private readonly topic: ChangeTopic,
    private readonly subscriber: RedisClient,
    /** Re-read the version at most this often even without announcements. */
    private readonly recheckMs: number,
  ) {}

  static async start(
    ctx: Pick<ServiceContext, 'redis' | 'config' | 'newRedis'>,
    topic: ChangeTopic,
    recheckMs: number,
  ): Promise<AnnouncedVersion> {
    const subscriber = ctx.newRedis();
    const watched = new AnnouncedVersion(ctx, topic, subscriber, recheckMs);
    subscriber.on('message', () => watched.invalidate());
    await subscriber.subscribe(channel(ctx.config.queuePrefix, topic));
    return watched;
  }

  /** The version as last read, re-read first after an announcement or the quiet period. */
  current(): Promise<string> {
    if (this.version !== undefined && !this.stale && Date.now() - this.checkedAt < this.recheckMs) return Promise.resolve(this.version);
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  /**
   * The version as a read started now finds it: a read already in flight may have been sent before a
   * change the caller must see (a rerating started right after a price change), so it is waited out
   * first.
   */
  async fresh(): Promise<string> {
    if (this.reading) await this.reading.catch(() => undefined);
    this.stale = true;
    return this.current();
  }

  /** The next use re-reads the version (this process itself changed the data). */
  invalidate(): void {
    this.stale = true;
  }

  private async read(): Promise<string> {
    // Cleared before the read, so that an announcement arriving during it makes the next use read again.
    this.stale = false;
    let version: string;
    try {
      version = String(await versionCommand(this.ctx, this.topic, 'get'));
    } catch (err) {
      this.stale = true;
      throw err;
    }
    this.checkedAt = Date.now();
    this.version = version;
    return version;
  }

  async close(): Promise<void> {
    await closeRedis(this.subscriber);
  }
}
