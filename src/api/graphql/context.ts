import type { IResolvers, MercuriusContext } from 'mercurius';
import type { AppContext } from '../../shared/domain/context';
import type { RatingDataCache } from '../../shared/domain/rating-data/cache';
import type { ApiStores } from '../store';

/** What the management API adds to every resolver's context (see buildApi). */
export interface ApiServices {
  stores: ApiStores;
  /** In-memory rating data, for routing answers (destination_rate, least-cost routing). */
  ratingData: Pick<RatingDataCache, 'index' | 'freshIndex'>;
}

export type ApiContext = MercuriusContext & { ctx: AppContext } & ApiServices;

/** Resolvers of an API module; parents differ per type, so the source stays untyped here. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ApiResolvers = IResolvers<any, ApiContext>;
