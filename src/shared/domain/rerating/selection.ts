import type { Filter } from 'mongodb';
import type { TransactionDoc } from '../types';
import { RERATABLE_STATES } from '../ledger/rerate';
import type { RerateSelection } from './model';

export type { RerateSelection };

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The records of a selection, after the record `after` in `_id` order (a run's cursor). `pending`: also
 * records still 'pending' (a run settles those whose charge is done before it rates them: batch.ts).
 */
export function selectionFilter(
  selection: RerateSelection,
  after: string | null = null,
  options: { pending?: boolean } = {},
): Filter<TransactionDoc> {
  return {
    state: { $in: [...RERATABLE_STATES, ...(options.pending ? (['pending'] as const) : [])] },
    // A deleted account's records: its tag may be another customer's now (types.ts, closed_account).
    closed_account: { $exists: false },
    timestamp_begin: { $gte: selection.from, $lt: selection.to },
    ...(selection.account_tags ? { account_tag: { $in: selection.account_tags } } : {}),
    ...(selection.pricelist_tag ? { 'destination_rate.pricelist_tag': selection.pricelist_tag } : {}),
    ...(selection.carrier_tag ? { 'destination_rate.carrier_tag': selection.carrier_tag } : {}),
    ...(selection.prefix ? { destination: { $regex: `^${escapeRegex(selection.prefix)}` } } : {}),
    ...(after !== null ? { _id: { $gt: after } } : {}),
  };
}

/** What is wrong with a selection (a message naming the field), or null. */
export function selectionProblem(selection: RerateSelection): string | null {
  if (!(selection.from instanceof Date) || Number.isNaN(selection.from.getTime())) return 'from: a date and time';
  if (!(selection.to instanceof Date) || Number.isNaN(selection.to.getTime())) return 'to: a date and time';
  if (selection.to.getTime() <= selection.from.getTime()) return 'to: must be after from';
  if (selection.account_tags && selection.account_tags.length === 0) return 'account_tags: list at least one, or leave it out for all';
  return null;
}
