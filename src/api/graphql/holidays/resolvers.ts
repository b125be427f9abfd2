import type { HolidayDoc } from '../../../shared/domain/types';
import type { HolidayFilter } from '../../store/holidays';
import type { ApiContext, ApiResolvers } from '../context';
import type { Args } from '../common/input';
import { readListWindow, type ListArgs } from '../common/listing';
import { holidaySortable, readHolidayCreate, readHolidayKey, readHolidayUpdate } from './input';

export const holidayResolvers: ApiResolvers = {
  Query: {
    Holiday: (_root: unknown, args: Args, { stores }: ApiContext) => stores.holidays.find(readHolidayKey(args)),
    allHolidays: (_root: unknown, args: ListArgs<HolidayFilter>, { stores }: ApiContext) =>
      stores.holidays.list(args.filter ?? {}, readListWindow(args, holidaySortable)),
    _allHolidaysMeta: async (_root: unknown, args: ListArgs<HolidayFilter>, { stores }: ApiContext) => ({
      count: await stores.holidays.count(args.filter ?? {}),
    }),
  },
  Mutation: {
    createHoliday: (_root: unknown, args: Args, { stores }: ApiContext) => stores.holidays.create(readHolidayCreate(args)),
    updateHoliday: (_root: unknown, args: Args, { stores }: ApiContext) => {
      const { key, patch } = readHolidayUpdate(args);
      return stores.holidays.update(key, patch);
    },
    deleteHoliday: (_root: unknown, args: Args, { stores }: ApiContext) => stores.holidays.delete(readHolidayKey(args)),
  },
  Holiday: {
    id: (holiday: HolidayDoc) => holiday._id,
  },
};
