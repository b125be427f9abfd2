import type { Filter } from 'mongodb';
import type { CarrierDoc, CarrierProtocol } from '../../shared/domain/types';
import type { Collections } from '../../shared/domain/store';
import type { ReadLimits } from './documents';
import { allOf, idConditions, matchAny, matchValue, textSearch } from './query';
import type { ChangeAnnouncer } from './change-announcer';
import type { References } from './references';
import { TaggedStore } from './tagged-store';

export interface CarrierFilter {
  id?: string | null;
  ids?: string[] | null;
  carrier_tag?: string[] | null;
  host?: string | null;
  protocol?: CarrierProtocol | null;
  active?: boolean | null;
  /** react-admin full-text search (textSearch) over carrier_tag and host (carriers have no name). */
  q?: string | null;
}

export const CARRIER_SEARCH_PATHS = ['carrier_tag', 'host'] as const;

export function carrierQuery(filter: CarrierFilter): Filter<CarrierDoc> {
  return allOf<CarrierDoc>([
    ...idConditions<CarrierDoc>(filter),
    ...matchAny<CarrierDoc>('carrier_tag', filter.carrier_tag),
    ...matchValue<CarrierDoc>('host', filter.host),
    ...matchValue<CarrierDoc>('protocol', filter.protocol),
    ...matchValue<CarrierDoc>('active', filter.active),
    ...textSearch<CarrierDoc>(filter.q, CARRIER_SEARCH_PATHS),
  ]);
}

export type CarrierStore = TaggedStore<CarrierDoc, CarrierFilter>;

/** Carriers; renaming or deleting one that rates or accounts still name is refused. */
export function carrierStore(
  collections: Collections,
  references: References,
  ratingData: ChangeAnnouncer,
  reads: ReadLimits,
): CarrierStore {
  return new TaggedStore({
    collection: collections.carriers,
    what: 'carrier',
    tagField: 'carrier_tag',
    query: carrierQuery,
    refuseInUse: (tag, change) => references.refuseCarrierInUse('carrier_tag', tag, change),
    afterWrite: () => ratingData.announce(),
    reads,
  });
}
