import { MongoBulkWriteError, type WriteError } from 'mongodb';

/** How MongoDB reports what the service decides on (a unique key taken, a bulk write's refusals). */

export function isDuplicateKeyError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}

/**
 * The per-document refusals of an unordered bulk write (insertMany, bulkWrite with ordered: false): the
 * writes not named in them were applied. Rethrows anything else: the driver also wraps a failure of the
 * whole command (connection lost, server unreachable) in MongoBulkWriteError, with no refusals, and
 * then no write's fate is known.
 */
export function bulkRefusals(err: unknown): WriteError[] {
  if (!(err instanceof MongoBulkWriteError)) throw err;
  const refusals = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
  if (refusals.length === 0) throw err;
  return refusals;
}
