import { ErrorCodes, ServiceError } from '../../shared/errors';
import { isDuplicateKeyError } from '../../shared/mongo';

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
  // `rev` is the accounts' internal write counter: the (account_tag, rev) index exists for fast
  // conditional updates, and a clash on it is a clash on account_tag, the only field a client sets.
  return fields.filter((f) => f !== 'rev').map((f) => (f === '_id' ? 'id' : f));
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
