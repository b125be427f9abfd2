import type { HolidayDoc } from '../../../shared/domain/types';
import type { TaggedKey } from '../../store/tagged-store';
import { newId, readTaggedKey, readTaggedUpdate } from '../common/identify';
import { readCreate, type Args, type FieldRules } from '../common/input';
import { sortableFields } from '../common/listing';
import { localDate, text } from '../common/validate';

export const holidayRules: FieldRules<HolidayDoc> = {
  date: { parse: localDate, required: true },
  name: { parse: text(), nullable: true },
};

export const holidaySortable = sortableFields(['date', 'name']);

export function readHolidayKey(args: Args): TaggedKey {
  return readTaggedKey(args, 'date');
}

export function readHolidayCreate(args: Args): HolidayDoc {
  return { _id: newId(args), ...readCreate(holidayRules, args) } as HolidayDoc;
}

export function readHolidayUpdate(args: Args): { key: TaggedKey; patch: Partial<HolidayDoc> } {
  return readTaggedUpdate(args, 'date', holidayRules);
}
