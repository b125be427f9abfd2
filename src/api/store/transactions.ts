import type { Filter } from 'mongodb';
import { sameTerms } from '../../shared/domain/rating';
import type { RateSnapshot, TransactionDoc } from '../../shared/domain/types';
import { badInput } from '../../shared/infra/errors';
import { UNDONE_ROLLBACKS, type Collections } from '../../shared/domain/store';
import { countMatching, exists, findPage, insertNew, type ListWindow, type ReadLimits } from './documents';
import { notFound, rethrowDuplicate } from './errors';
import { allOf, idConditions, matchAny, matchValue, MAX_SEARCH_LENGTH, rangeConditions, textSearch } from './query';
import type { References } from './references';

/** A record is named by id, or by its account and transaction tags (its unique key). */
export type TransactionKey = { id: string } | { account_tag: string; transaction_tag: string };

export type TransactionPatch = Partial<Omit<TransactionDoc, '_id'>>;

export interface TransactionFilter {
  id?: string | null;
  ids?: string[] | null;
  account_tag?: string[] | null;
  transaction_tag?: string[] | null;
  inbound?: boolean | null;
  timestamp_begin_gte?: Date | null;
  timestamp_begin_gt?: Date | null;
  timestamp_begin_lte?: Date | null;
  timestamp_begin_lt?: Date | null;
  timestamp_end_gte?: Date | null;
  timestamp_end_gt?: Date | null;
  timestamp_end_lte?: Date | null;
  timestamp_end_lt?: Date | null;
  /** Records whose destination starts with this text (taken literally). */
  destination_prefix?: string | null;
  /** react-admin full-text search (textSearch) over the tags and the numbers. */
  q?: string | null;
}

export const TRANSACTION_SEARCH_PATHS = ['transaction_tag', 'account_tag', 'source', 'destination'] as const;

/**
 * `destination` starting with `prefix`: an anchored, case-sensitive regex with every metacharacter
 * escaped, so the value is never a pattern, and the server can serve it from an index on destination
 * if one is ever added (an anchored literal prefix is an index range). Blank adds no condition.
 */
export function destinationPrefix(prefix: string | null | undefined): Array<Filter<TransactionDoc>> {
  if (prefix === null || prefix === undefined || prefix === '') return [];
  if (prefix.length > MAX_SEARCH_LENGTH) throw badInput('destination_prefix', `must be at most ${MAX_SEARCH_LENGTH} characters`);
  return [{ destination: { $regex: `^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}` } }];
}

export function transactionQuery(filter: TransactionFilter): Filter<TransactionDoc> {
  return allOf<TransactionDoc>([
    ...idConditions<TransactionDoc>(filter),
    ...matchAny<TransactionDoc>('account_tag', filter.account_tag),
    ...matchAny<TransactionDoc>('transaction_tag', filter.transaction_tag),
    ...matchValue<TransactionDoc>('inbound', filter.inbound),
    ...rangeConditions<TransactionDoc>('timestamp_begin', 'timestamp_begin', filter as Record<string, unknown>),
    ...rangeConditions<TransactionDoc>('timestamp_end', 'timestamp_end', filter as Record<string, unknown>),
    ...destinationPrefix(filter.destination_prefix),
    ...textSearch<TransactionDoc>(filter.q, TRANSACTION_SEARCH_PATHS),
  ]);
}

/**
 * By (account, tag) the account's own record comes first (its unique key with the account as caller);
 * otherwise a record the account holds of another caller's call (a parent's share of a child's call).
 */
function keyQueries(key: TransactionKey): Array<Filter<TransactionDoc>> {
  if ('id' in key) return [{ _id: key.id }];
  return [
    { account_tag: key.account_tag, transaction_tag: key.transaction_tag, origin_account_tag: key.account_tag },
    { account_tag: key.account_tag, transaction_tag: key.transaction_tag },
  ];
}

/**
 * Raw management of Transaction records: no balance effect, no engine bookkeeping. The engine
 * writes records itself; these operations are for corrections and imports.
 */
export class TransactionStore {
  constructor(
    private readonly collections: Collections,
    private readonly references: References,
    private readonly reads: ReadLimits,
  ) {}

  async find(key: TransactionKey): Promise<TransactionDoc | null> {
    for (const query of keyQueries(key)) {
      const found = await this.collections.transactions.findOne(query);
      if (found) return found;
    }
    return null;
  }

  list(filter: TransactionFilter, window: ListWindow): Promise<TransactionDoc[]> {
    return findPage(this.collections.transactions, transactionQuery(filter), window, this.reads);
  }

  count(filter: TransactionFilter): Promise<number> {
    return countMatching(this.collections.transactions, transactionQuery(filter), this.reads);
  }

  /** A record written through the API is the account's own call (it is its own caller). */
  async create(draft: TransactionDoc): Promise<TransactionDoc> {
    const doc: TransactionDoc = { ...draft, origin_account_tag: draft.origin_account_tag ?? draft.account_tag };
    await this.references.requireAccounts('account_tag', [doc.account_tag]);
    await insertNew(this.collections.transactions, doc, 'transaction');
    return doc;
  }

  async update(key: TransactionKey, patch: TransactionPatch): Promise<TransactionDoc> {
    const current = await this.find(key);
    if (!current) throw notFound('transaction');
    if (Object.keys(patch).length === 0) return current;
    if (current.state !== undefined) patch = withoutKeptFields(current, patch);
    if (Object.keys(patch).length === 0) return current;
    // A rerating's intent: its fee is about to change, and the edit would write the one read back.
    if (current.rerate) throw badInput('transaction', 'the engine is rerating this call: try again in a moment');
    if (patch.account_tag !== undefined && patch.account_tag !== current.account_tag) {
      await this.references.requireAccounts('account_tag', [patch.account_tag]);
      // An own record moved to another account stays that account's own call.
      if ((current.origin_account_tag ?? current.account_tag) === current.account_tag)
        patch = { ...patch, origin_account_tag: patch.account_tag };
    }
    let updated: TransactionDoc | null;
    try {
      // As read: a record the engine took over meanwhile (its state changed, a rerating began or moved
      // its fee) is not edited blind: the patch carries the fields as read, and would write them back.
      updated = await this.collections.transactions.findOneAndUpdate(
        { _id: current._id, state: current.state ?? { $exists: false }, fee: current.fee ?? null, rerate: { $in: [null] } },
        { $set: patch },
        { returnDocument: 'after' },
      );
    } catch (err) {
      rethrowDuplicate(err, 'transaction');
    }
    if (!updated) {
      if (await this.collections.transactions.findOne({ _id: current._id }, { projection: { _id: 1 } }))
        throw badInput('transaction', 'the engine changed this call while it was being edited: read it again');
      throw notFound('transaction');
    }
    return updated;
  }

  async delete(key: TransactionKey): Promise<TransactionDoc> {
    for (const query of keyQueries(key)) {
      const record = await this.collections.transactions.findOne(query, { projection: { state: 1, rerate: 1 } });
      if (!record) continue;
      // A rollback answered ok refunds the records it was decided on, found by _id: one whose worker
      // died before the refund leaves the record charged until the recovery sweep carries it out, and
      // deleting it then would lose the refund (the check an account's deletion makes, deletion-checks.ts).
      // A target names the record, or the running entry processing recorded it under (the same id).
      const targeted = { $or: [{ 'targets.record_id': record._id }, { 'targets.entry_id': record._id }] };
      if (await exists(this.collections.outcomes, { ...UNDONE_ROLLBACKS, ...targeted }))
        throw badInput('transaction', 'a rollback answered ok has still to refund this call: try again in a moment');
      // Not while the engine is charging, refunding or rerating it: that work would find nothing (a
      // rollback answered ok would never refund) or move money for a record that is gone.
      const deleted = await this.collections.transactions.findOneAndDelete({
        _id: record._id,
        state: { $nin: ['pending', 'rolling_back'] },
        rerate: { $in: [null] },
      });
      if (deleted) return deleted;
      const busy = await this.collections.transactions.findOne({ _id: record._id }, { projection: { state: 1, rerate: 1 } });
      if (busy)
        throw badInput(
          'transaction',
          `the engine is ${busy.rerate ? 'rerating' : busy.state === 'pending' ? 'charging' : 'refunding'} this call: try again in a moment (to refund a call, rollbackTransaction)`,
        );
    }
    throw notFound('transaction');
  }
}

/**
 * The fields of a record the engine charged whose change would make a later refund or rerating move
 * other money than was charged, or find another call: fee, duration and rate, the call's identity and
 * times. They change through rerating and rollback only; set to what they are, they pass.
 */
const ENGINE_KEPT: ReadonlyArray<keyof TransactionPatch> = [
  'fee',
  'duration',
  'destination_rate',
  'segments',
  'account_tag',
  'origin_account_tag',
  'transaction_tag',
  'timestamp_begin',
  'timestamp_end',
  'inbound',
  // Rerating prices the call again from its number and carrier: another number is another call.
  'destination',
  'carrier_ip',
];

/**
 * The patch without the kept fields, which must be what they are: a client sends a whole record back
 * (react-admin's edit), and the engine's own values stay as it wrote them (a rate snapshot keeps its
 * timed prices, which the API's input cannot spell).
 */
function withoutKeptFields(current: TransactionDoc, patch: TransactionPatch): TransactionPatch {
  const rest: TransactionPatch = { ...patch };
  for (const field of ENGINE_KEPT) {
    if (!(field in patch)) continue;
    const same =
      field === 'destination_rate'
        ? sameSnapshot(patch.destination_rate, current.destination_rate)
        : sameValue(patch[field], current[field]);
    if (!same)
      throw badInput(
        field,
        'cannot change on a record the engine charged: its refund and rerating move what it was charged (rerate or roll back instead)',
      );
    delete rest[field];
  }
  return rest;
}

/** The same rate as far as the API can say it: tags, prefix, terms and description, whatever the key order. */
function sameSnapshot(a: RateSnapshot | null | undefined, b: RateSnapshot | null | undefined): boolean {
  if (!a || !b) return (a ?? null) === (b ?? null);
  return a.pricelist_tag === b.pricelist_tag && a.carrier_tag === b.carrier_tag && a.prefix === b.prefix && sameTerms(a, b);
}

const sameValue = (a: unknown, b: unknown): boolean =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : JSON.stringify(a, bigintJson) === JSON.stringify(b, bigintJson);

const bigintJson = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);
