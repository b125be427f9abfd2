import { badInput } from '../../../shared/infra/errors';
import type { PricelistRateDoc } from '../../../shared/domain/types';
import type { RateDraft, RateKey, RatePatch, TagRef } from '../../store/rates';
import { lookupString, newId } from '../common/identify';
import { optionalArg, readCreate, readPatch, type Args, type FieldRules } from '../common/input';
import { sortableFields } from '../common/listing';
import { dateTime, nonNegativeInt, prefix, rateTiming, tag, text, TextLimits, uuid } from '../common/validate';

type RateFields = Omit<PricelistRateDoc, '_id' | 'pricelist_tag' | 'carrier_tag' | 'previous_versions' | 'timing_key'>;

export const rateRules: FieldRules<RateFields> = {
  prefix: { parse: prefix, required: true },
  datetime_start: { parse: dateTime, nullable: true },
  datetime_end: { parse: dateTime, nullable: true },
  connect_fee: { parse: nonNegativeInt, fallback: () => 0 },
  rate: { parse: nonNegativeInt, required: true },
  // 1 is what a missing increment means to the fee formula (docs/DESIGN.md section 3); stored explicitly.
  rate_increment: { parse: nonNegativeInt, fallback: () => 1 },
  interval_start: { parse: nonNegativeInt, fallback: () => 0 },
  description: { parse: text(TextLimits.DESCRIPTION), nullable: true },
  timing: { parse: rateTiming, nullable: true },
};

export const rateSortable = sortableFields([
  'pricelist_tag',
  'carrier_tag',
  'prefix',
  'datetime_start',
  'datetime_end',
  'connect_fee',
  'rate',
  'rate_increment',
  'interval_start',
  'description',
]);

const KEY_ARGS = ['pricelist_tag', 'pricelist_id', 'carrier_tag', 'carrier_id', 'prefix'];

type Side = 'pricelist' | 'carrier';

/** `<side>_tag` and/or `<side>_id`; undefined when neither is given. */
function readRef(args: Args, side: Side, parseTag = tag, parseId = uuid): TagRef | undefined {
  for (const name of [`${side}_tag`, `${side}_id`]) {
    if (args[name] === null) throw badInput(name, 'cannot be null');
  }
  const ref: TagRef = { tag: optionalArg(args, `${side}_tag`, parseTag), id: optionalArg(args, `${side}_id`, parseId) };
  return ref.tag === undefined && ref.id === undefined ? undefined : ref;
}

function requireRef(args: Args, side: Side): TagRef {
  const ref = readRef(args, side);
  if (!ref) throw badInput(`${side}_tag`, `is required (or ${side}_id)`);
  return ref;
}

/** By id, or by the unique key (pricelist, carrier, prefix). */
export function readRateKey(args: Args): RateKey {
  const id = optionalArg(args, 'id', lookupString);
  if (id !== undefined) return { id };
  const pricelist = readRef(args, 'pricelist', lookupString, lookupString);
  const carrier = readRef(args, 'carrier', lookupString, lookupString);
  const ratePrefix = optionalArg(args, 'prefix', lookupString);
  if (!pricelist || !carrier || ratePrefix === undefined) {
    throw badInput('id', 'give id, or the pricelist (pricelist_tag or pricelist_id), the carrier (carrier_tag or carrier_id) and prefix');
  }
  return { pricelist, carrier, prefix: ratePrefix };
}

export function readRateCreate(args: Args): RateDraft {
  return {
    _id: newId(args),
    ...(readCreate(rateRules, args) as RateFields),
    pricelist: requireRef(args, 'pricelist'),
    carrier: requireRef(args, 'carrier'),
  };
}

export function readRateUpdate(args: Args): { key: RateKey; patch: RatePatch } {
  if (optionalArg(args, 'id', lookupString) === undefined) {
    return { key: readRateKey(args), patch: readPatch(rateRules, args, KEY_ARGS) };
  }
  const patch: RatePatch = readPatch(rateRules, args);
  const pricelist = readRef(args, 'pricelist');
  const carrier = readRef(args, 'carrier');
  if (pricelist) patch.pricelist = pricelist;
  if (carrier) patch.carrier = carrier;
  return { key: readRateKey(args), patch };
}
