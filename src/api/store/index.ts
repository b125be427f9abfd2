import type { AppContext } from '../../shared/domain/context';
import type { RatingDataCache } from '../../shared/domain/rating-data/cache';
import { AccountStore } from './accounts';
import { carrierStore, type CarrierStore } from './carriers';
import { DashboardStore } from './dashboard';
import { holidayStore, type HolidayStore } from './holidays';
import { pricelistStore, type PricelistStore } from './pricelists';
import { RateStore } from './rates';
import { ReratingStore } from './reratings';
import { ChangeAnnouncer } from './change-announcer';
import { References } from './references';
import { TransactionStore } from './transactions';

/** Storage of the management API, one store per resource. */
export interface ApiStores {
  carriers: CarrierStore;
  pricelists: PricelistStore;
  rates: RateStore;
  /** The holiday calendar rate timings read. */
  holidays: HolidayStore;
  /** Rerating runs and their dry runs. */
  reratings: ReratingStore;
  accounts: AccountStore;
  transactions: TransactionStore;
  /** The console's home page figures, cached per process (one store per API instance). */
  dashboard: DashboardStore;
}

export function createApiStores(ctx: AppContext, ratingDataCache: RatingDataCache): ApiStores {
  const collections = ctx.mongo.collections;
  const references = new References(collections);
  const ratingData = new ChangeAnnouncer(ctx, 'rating-data', ratingDataCache);
  const reads = { maxTimeMS: ctx.config.mongoMaxTimeMs };
  return {
    carriers: carrierStore(collections, references, ratingData, reads),
    pricelists: pricelistStore(collections, references, ratingData, reads),
    rates: new RateStore(collections, ratingData, reads),
    holidays: holidayStore(collections, ratingData, reads),
    reratings: new ReratingStore(collections, ctx.queues.imports, reads),
    accounts: new AccountStore(collections, references, ctx.config, reads, ctx.mongo.db, new ChangeAnnouncer(ctx, 'account-settings')),
    transactions: new TransactionStore(collections, references, reads),
    dashboard: new DashboardStore(collections, ctx.queues, ctx.config, reads),
  };
}
