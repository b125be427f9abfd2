import type { Filter } from 'mongodb';
import type { TransactionDoc } from '../../shared/domain/types';
import type { Collections } from '../../shared/mongo';
import { countMatching, findPage, insertNew, type ListWindow } from './documents';
import { notFound, rethrowDuplicate } from './errors';
import { allOf, idConditions, matchAny, matchValue, rangeConditions } from './query';
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
}

export function transactionQuery(filter: TransactionFilter): Filter<TransactionDoc> {
  return allOf<TransactionDoc>([
    ...idConditions<TransactionDoc>(filter),
    ...matchAny<TransactionDoc>('account_tag', filter.account_tag),
    ...matchAny<TransactionDoc>('transaction_tag', filter.transaction_tag),
    ...matchValue<TransactionDoc>('inbound', filter.inbound),
    ...rangeConditions<TransactionDoc>('timestamp_begin', 'timestamp_begin', filter as Record<string, unknown>),
  ]);
}

function keyQuery(key: TransactionKey): Filter<TransactionDoc> {
  return 'id' in key ? { _id: key.id } : { account_tag: key.account_tag, transaction_tag: key.transaction_tag };
}

/**
 * Raw management of Transaction records: no balance effect, no engine bookkeeping. The engine
 * writes records itself; these operations are for corrections and imports.
 */
export class TransactionStore {
  constructor(
    private readonly collections: Collections,
    private readonly references: References,
  ) {}

  find(key: TransactionKey): Promise<TransactionDoc | null> {
    return this.collections.transactions.findOne(keyQuery(key));
  }

  list(filter: TransactionFilter, window: ListWindow): Promise<TransactionDoc[]> {
    return findPage(this.collections.transactions, transactionQuery(filter), window);
  }

  count(filter: TransactionFilter): Promise<number> {
    return countMatching(this.collections.transactions, transactionQuery(filter));
  }

  async create(doc: TransactionDoc): Promise<TransactionDoc> {
    await this.references.requireAccounts('account_tag', [doc.account_tag]);
    await insertNew(this.collections.transactions, doc, 'transaction');
    return doc;
  }

  async update(key: TransactionKey, patch: TransactionPatch): Promise<TransactionDoc> {
    const current = await this.find(key);
    if (!current) throw notFound('transaction');
    if (Object.keys(patch).length === 0) return current;
    if (patch.account_tag !== undefined && patch.account_tag !== current.account_tag) {
      await this.references.requireAccounts('account_tag', [patch.account_tag]);
    }
    let updated: TransactionDoc | null;
    try {
      updated = await this.collections.transactions.findOneAndUpdate({ _id: current._id }, { $set: patch }, { returnDocument: 'after' });
    } catch (err) {
      rethrowDuplicate(err, 'transaction');
    }
    if (!updated) throw notFound('transaction');
    return updated;
  }

  async delete(key: TransactionKey): Promise<TransactionDoc> {
    const deleted = await this.collections.transactions.findOneAndDelete(keyQuery(key));
    if (!deleted) throw notFound('transaction');
    return deleted;
  }
}
