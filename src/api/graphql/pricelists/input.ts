import { badInput } from '../../../shared/infra/errors';
import type { PricelistDoc } from '../../../shared/domain/types';
import type { TaggedKey } from '../../store/tagged-store';
import { newId, readTaggedKey, readTaggedUpdate } from '../common/identify';
import { isGiven, readCreate, type Args, type FieldRules } from '../common/input';
import { sortableFields } from '../common/listing';
import { oneOf, tag, text, timeZone } from '../common/validate';

export const pricelistRules: FieldRules<PricelistDoc> = {
  pricelist_tag: { parse: tag, required: true },
  name: { parse: text(), nullable: true },
  currency: { parse: oneOf(['USD', 'EUR'] as const), required: true },
  // Absent on pricelists made before timings, null when created without one: both read as UTC.
  time_zone: { parse: timeZone, nullable: true },
};

export const pricelistSortable = sortableFields(['pricelist_tag', 'name', 'currency', 'time_zone']);

/**
 * The spec's parameter tables call the tag `tag`, its samples `pricelist_tag`: both are accepted,
 * together only when equal.
 */
export function withPricelistTag(args: Args): Args {
  if (!isGiven(args, 'tag')) return args;
  const { tag: alias, ...rest } = args;
  if (isGiven(args, 'pricelist_tag') && args.pricelist_tag !== null && args.pricelist_tag !== alias) {
    throw badInput('tag', 'differs from pricelist_tag; give one of them');
  }
  return { ...rest, pricelist_tag: args.pricelist_tag ?? alias };
}

export function readPricelistKey(args: Args): TaggedKey {
  return readTaggedKey(withPricelistTag(args), 'pricelist_tag');
}

export function readPricelistCreate(args: Args): PricelistDoc {
  return { _id: newId(args), ...readCreate(pricelistRules, withPricelistTag(args)) } as PricelistDoc;
}

export function readPricelistUpdate(args: Args): { key: TaggedKey; patch: Partial<PricelistDoc> } {
  return readTaggedUpdate(withPricelistTag(args), 'pricelist_tag', pricelistRules);
}
