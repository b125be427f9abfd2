import type { AppContext } from '../context';
import { AnnouncedVersion, announceChange } from '../../infra/announced-version';
import { RatingIndex } from '../rating';

/**
 * Rating data (rates and carriers) lives in each process's memory as a prefix index, so rating a
 * call costs no database round trip (docs/DESIGN.md section 2). Every write to carriers, pricelists or
 * rates bumps a version in Redis and announces it (src/shared/infra/announced-version.ts); holders rebuild
 * when the version moved.
 */
export function announceRatingDataChange(ctx: Pick<AppContext, 'redis' | 'config'>): Promise<void> {
  return announceChange(ctx, 'rating-data');
}

export class RatingDataCache {
  private current: { version: string; index: RatingIndex } | undefined;
  private building: { version: string; index: Promise<RatingIndex> } | undefined;

  private constructor(
    private readonly ctx: AppContext,
    private readonly version: AnnouncedVersion,
  ) {}

  /** `recheckMs`: re-read the version at most this often even without announcements (missed pub/sub). */
  static async start(ctx: AppContext, recheckMs = 5000): Promise<RatingDataCache> {
    return new RatingDataCache(ctx, await AnnouncedVersion.start(ctx, 'rating-data', recheckMs));
  }

  /** The current index; rebuilt first when the data changed. */
  async index(): Promise<RatingIndex> {
    return this.indexAt(await this.version.current());
  }

  /**
   * The index as the data stands now: the version is read from Redis first, not taken from the last
   * announcement. For work that must see a change made just before it was asked for, whose announcement
   * may not have reached this process yet (a rerating started right after a price change).
   */
  async freshIndex(): Promise<RatingIndex> {
    return this.indexAt(await this.version.fresh());
  }

  private indexAt(version: string): Promise<RatingIndex> {
    if (this.current?.version === version) return Promise.resolve(this.current.index);
    // A build of an older version under way is not this one's: its reads may predate the change.
    if (this.building?.version !== version) {
      const building = { version, index: this.rebuild(version) };
      this.building = building;
      const done = () => {
        if (this.building === building) this.building = undefined;
      };
      void building.index.then(done, done);
    }
    return this.building.index;
  }

  /** Forces a version check on the next use (after this process itself wrote rating data). */
  invalidate(): void {
    this.version.invalidate();
  }

  private async rebuild(version: string): Promise<RatingIndex> {
    const { rates, carriers, pricelists, holidays } = this.ctx.mongo.collections;
    const [rateDocs, carrierDocs, zones, holidayDocs] = await Promise.all([
      rates.find({}).toArray(),
      carriers.find({}).toArray(),
      pricelists.find({ time_zone: { $type: 'string' } }, { projection: { pricelist_tag: 1, time_zone: 1 } }).toArray(),
      holidays.find({}, { projection: { date: 1 } }).toArray(),
    ]);
    // Whole documents: a rate's previous versions (rate decks, src/shared/domain/rate-decks) are rating
    // candidates too, each valid in its own window, so calls before a deck's effective time keep their terms.
    const index = RatingIndex.build(rateDocs, carrierDocs, {
      timeZones: new Map(zones.map((z) => [z.pricelist_tag, z.time_zone as string])),
      holidays: holidayDocs.map((h) => h.date),
    });
    // A slower build of an older version finishing last must not replace a newer one.
    if (this.current === undefined || this.building?.version === version) this.current = { version, index };
    this.ctx.logger.debug({ version, rates: index.size }, 'rating index rebuilt');
    return index;
  }

  async close(): Promise<void> {
    await this.version.close();
  }
}
