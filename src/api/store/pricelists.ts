import type { Filter } from 'mongodb';
import type { PricelistCurrency, PricelistDoc } from '../../shared/domain/types';
import type { Collections } from '../../shared/domain/store';
import type { ReadLimits } from './documents';
import { allOf, idConditions, matchAny, matchValue, textSearch } from './query';
import type { ChangeAnnouncer } from './change-announcer';
import type { References } from './references';
import { TaggedStore } from './tagged-store';

export interface PricelistFilter {
  id?: string | null;
  ids?: string[] | null;
  pricelist_tag?: string[] | null;
  currency?: PricelistCurrency | null;
  /** react-admin full-text search (textSearch) over pricelist_tag and name (pricelists have no description). */
  q?: string | null;
}

export const PRICELIST_SEARCH_PATHS = ['pricelist_tag', 'name'] as const;

export function pricelistQuery(filter: PricelistFilter): Filter<PricelistDoc> {
  return allOf<PricelistDoc>([
    ...idConditions<PricelistDoc>(filter),
    ...matchAny<PricelistDoc>('pricelist_tag', filter.pricelist_tag),
    ...matchValue<PricelistDoc>('currency', filter.currency),
    ...textSearch<PricelistDoc>(filter.q, PRICELIST_SEARCH_PATHS),
  ]);
}

export type PricelistStore = TaggedStore<PricelistDoc, PricelistFilter>;

/** Pricelists; renaming or deleting one that rates or accounts still name is refused. */
export function pricelistStore(
  collections: Collections,
  references: References,
  ratingData: ChangeAnnouncer,
  reads: ReadLimits,
): PricelistStore {
  return new TaggedStore({
    collection: collections.pricelists,
    what: 'pricelist',
    tagField: 'pricelist_tag',
    query: pricelistQuery,
    refuseInUse: (tag, change) => references.refusePricelistInUse('pricelist_tag', tag, change),
    afterWrite: () => ratingData.announce(),
    reads,
  });
}
