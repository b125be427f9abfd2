import type { AppContext } from '../context';
import type { RedisClient } from '../redis';
import { RatingIndex } from '../rating';

/**
 * Rating data (rates and carriers) lives in each process's memory as a prefix index, so rating a
 * call costs no database round trip (DESIGN.md section 2). Every write to carriers, pricelists or
 * rates bumps a version in Redis and announces it on a channel; holders rebuild on the announcement,
 * and also re-check the version before use after a quiet period in case a message was missed.
 * Redis Cluster: one key (INCR, GET) and a pub/sub channel, which a cluster broadcasts to every node.
 */
const versionKey = (prefix: string) => `${prefix}:rating-data:version`;
const channel = (prefix: string) => `${prefix}:rating-data:changed`;

/** Call after any committed write to carriers, pricelists or rates. */
export async function announceRatingDataChange(ctx: Pick<AppContext, 'redis' | 'config'>): Promise<void> {
  const version = await ctx.redis.incr(versionKey(ctx.config.queuePrefix));
  await ctx.redis.publish(channel(ctx.config.queuePrefix), String(version));
}

export class RatingDataCache {
  private current: { version: string; index: RatingIndex } | undefined;
  private building: Promise<RatingIndex> | undefined;
  private stale = true;
  private checkedAt = 0;

  private constructor(
    private readonly ctx: AppContext,
    private readonly subscriber: RedisClient,
    /** Re-read the version at most this often even without announcements (missed pub/sub). */
    private readonly recheckMs: number,
  ) {}

  static async start(ctx: AppContext, recheckMs = 5000): Promise<RatingDataCache> {
    const subscriber = ctx.newRedis();
    const cache = new RatingDataCache(ctx, subscriber, recheckMs);
    subscriber.on('message', () => {
      cache.stale = true;
    });
    await subscriber.subscribe(channel(ctx.config.queuePrefix));
    return cache;
  }

  /** The current index; rebuilt first when the data changed. */
  async index(): Promise<RatingIndex> {
    if (this.current && !this.stale && Date.now() - this.checkedAt < this.recheckMs) return this.current.index;
    this.building ??= this.refresh().finally(() => (this.building = undefined));
    return this.building;
  }

  /** Forces a rebuild on the next use (after this process itself wrote rating data). */
  invalidate(): void {
    this.stale = true;
  }

  private async refresh(): Promise<RatingIndex> {
    this.stale = false;
    const version = (await this.ctx.redis.get(versionKey(this.ctx.config.queuePrefix))) ?? '0';
    this.checkedAt = Date.now();
    if (this.current && this.current.version === version) return this.current.index;
    const { rates, carriers } = this.ctx.mongo.collections;
    const [rateDocs, carrierDocs] = await Promise.all([rates.find({}).toArray(), carriers.find({}).toArray()]);
    // Whole documents: a rate's previous versions (rate decks, src/shared/rate-decks) are rating
    // candidates too, each valid in its own window, so calls before a deck's effective time keep their terms.
    const index = RatingIndex.build(rateDocs, carrierDocs);
    this.current = { version, index };
    this.ctx.logger.debug({ version, rates: index.size }, 'rating index rebuilt');
    return index;
  }

  async close(): Promise<void> {
    await this.subscriber.quit().catch(() => undefined);
  }
}
