import type { Filter } from 'mongodb';
import type { HolidayDoc } from '../../shared/domain/types';
import type { Collections } from '../../shared/domain/store';
import type { ReadLimits } from './documents';
import type { ChangeAnnouncer } from './change-announcer';
import { allOf, idConditions, matchAny, textSearch } from './query';
import { TaggedStore } from './tagged-store';

export interface HolidayFilter {
  id?: string | null;
  ids?: string[] | null;
  date?: string[] | null;
  /** Dates from this one on (inclusive), `YYYY-MM-DD`. */
  date_gte?: string | null;
  /** react-admin's search box: the name or the date contains it. */
  q?: string | null;
}

function holidayQuery(filter: HolidayFilter): Filter<HolidayDoc> {
  return allOf<HolidayDoc>([
    ...idConditions<HolidayDoc>(filter),
    ...matchAny<HolidayDoc>('date', filter.date),
    ...(filter.date_gte ? [{ date: { $gte: filter.date_gte } }] : []),
    ...textSearch<HolidayDoc>(filter.q, ['name', 'date']),
  ]);
}

export type HolidayStore = TaggedStore<HolidayDoc, HolidayFilter>;

/**
 * The holiday calendar that rate timings read (docs/RATING.md): one document per date, unique. Every
 * write announces a rating-data change, so workers rebuild their index with the new calendar.
 */
export function holidayStore(collections: Collections, ratingData: ChangeAnnouncer, reads: ReadLimits): HolidayStore {
  return new TaggedStore({
    collection: collections.holidays,
    what: 'holiday',
    tagField: 'date',
    query: holidayQuery,
    refuseInUse: async () => undefined,
    afterWrite: () => ratingData.announce(),
    reads,
  });
}
