import { ErrorCodes, ServiceError } from '../../shared/infra/errors';
import { isDuplicateKeyError } from '../../shared/infra/mongo-errors';

export const notFound = (what: string) => new ServiceError(ErrorCodes.NOT_FOUND, `${what} not found`);

export const invalidReference = (field: string, message: string) =>
  new ServiceError(ErrorCodes.INVALID_REFERENCE, `${field}: ${message}`, { field });

/**
 * Fields of the unique index a duplicate-key error names: from `keyPattern` (MongoDB), else from
 * the index name in the message (`index: pricelist_tag_1_carrier_tag_1_prefix_1 dup key`).
 */
export function duplicateKeyFields(err: unknown): string[] {
  const e = err as { keyPattern?: Record<string, unknown>; message?: string };
  let fields: string[] = [];
  if (e.keyPattern && Object.keys(e.keyPattern).length > 0) {
    fields = Object.keys(e.keyPattern);
  } else {
    const index = /index: (\S+)/.exec(e.message ?? '')?.[1];
    if (index === '_id_') fields = ['_id'];
    else if (index) fields = index.split(/_-?1(?:_|$)/).filter((f) => f !== '');
  }
  // Engine fields in unique indexes are not the client's: `rev`/`ledger_rev` (the accounts' write
  // counters, indexed with account_tag for fast conditional updates: a clash is a clash on
  // account_tag), a record's `origin_account_tag` (the API's records are their account's own) and a
  // rate's `timing_key` (the clash is on the rate's pricelist, carrier and prefix, for the same timing).
  const internal = new Set(['rev', 'ledger_rev', 'origin_account_tag', 'timing_key']);
  return fields.filter((f) => !internal.has(f)).map((f) => (f === '_id' ? 'id' : f));
}

/** Maps a duplicate-key error of a write to DUPLICATE naming the clashing field(s); rethrows others. */
export function rethrowDuplicate(err: unknown, what: string): never {
  if (!isDuplicateKeyError(err)) throw err;
  const fields = duplicateKeyFields(err);
  const named = fields.length > 0 ? fields.join(', ') : 'key';
  throw new ServiceError(ErrorCodes.DUPLICATE, `A ${what} with this ${named} already exists`, {
    field: fields.join(','),
  });
}
