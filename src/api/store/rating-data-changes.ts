import type { AppContext } from '../../shared/context';
import { announceRatingDataChange, type RatingDataCache } from '../../shared/rating-data/cache';

/**
 * Tells every process holding rating data in memory (workers, agents, this API's own cache) that
 * carriers, pricelists or rates changed. Called after each committed write to them.
 */
export class RatingDataChanges {
  constructor(
    private readonly ctx: Pick<AppContext, 'redis' | 'config' | 'logger'>,
    private readonly cache: Pick<RatingDataCache, 'invalidate'>,
  ) {}

  async announce(): Promise<void> {
    this.cache.invalidate();
    try {
      await announceRatingDataChange(this.ctx);
    } catch (err) {
      // The write is committed and cannot be taken back; failing the request would invite a retry
      // of something that already happened. Redis being down stops the queues too, so this is loud.
      this.ctx.logger.error({ err }, 'rating data changed but the change could not be announced over Redis');
    }
  }
}
