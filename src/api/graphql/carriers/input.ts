import type { CarrierDoc } from '../../../shared/domain/types';
import type { TaggedKey } from '../../store/tagged-store';
import { newId, readTaggedUpdate } from '../common/identify';
import { readCreate, type Args, type FieldRules } from '../common/input';
import { sortableFields } from '../common/listing';
import { bool, host, oneOf, port, tag } from '../common/validate';

export const carrierRules: FieldRules<CarrierDoc> = {
  carrier_tag: { parse: tag, required: true },
  host: { parse: host, required: true },
  port: { parse: port, required: true },
  // SIP runs over UDP unless told otherwise.
  protocol: { parse: oneOf(['TCP', 'UDP'] as const), fallback: () => 'UDP' },
  active: { parse: bool, fallback: () => true },
};

export const carrierSortable = sortableFields(['carrier_tag', 'host', 'port', 'protocol', 'active']);

export function readCarrierCreate(args: Args): CarrierDoc {
  return { _id: newId(args), ...readCreate(carrierRules, args) } as CarrierDoc;
}

export function readCarrierUpdate(args: Args): { key: TaggedKey; patch: Partial<CarrierDoc> } {
  return readTaggedUpdate(args, 'carrier_tag', carrierRules);
}
