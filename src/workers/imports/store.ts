import { type Collections } from '../../shared/domain/store';
import { bulkRefusals, isDuplicateKeyError } from '../../shared/infra/mongo-errors';
import { chunks } from '../../shared/infra/chunks';
import type { ImportRecordDoc } from './plan';

/**
 * Inserts records with one unordered insertMany. Returns the positions refused as duplicates (the
 * unique `_id` or (account_tag, transaction_tag) index): those calls are recorded already, by this
 * batch in an earlier attempt or by someone else. Any other error fails the batch (it is retried).
 */
export async function insertRecords(transactions: Collections['transactions'], docs: ImportRecordDoc[]): Promise<Set<number>> {
  const duplicates = new Set<number>();
  if (docs.length === 0) return duplicates;
  try {
    await transactions.insertMany(docs, { ordered: false });
  } catch (err) {
    const refusals = bulkRefusals(err);
    if (refusals.some((e) => !isDuplicateKeyError(e))) throw err;
    for (const e of refusals) duplicates.add(e.index);
  }
  return duplicates;
}

/**
 * Which of these records exist (written by an earlier execution of this batch), with their fees as
 * stored. By `_id`, and by account too (the shard key, docs/SCALING.md): a record's `_id` derives from its account.
 */
export async function existingFees(
  transactions: Collections['transactions'],
  docs: Array<Pick<ImportRecordDoc, '_id' | 'account_tag'>>,
): Promise<Map<string, bigint>> {
  const found = await Promise.all(
    chunks(docs).map((part) =>
      transactions
        .find(
          { _id: { $in: part.map((d) => d._id) }, account_tag: { $in: [...new Set(part.map((d) => d.account_tag))] } },
          { projection: { _id: 1, fee: 1 } },
        )
        .toArray(),
    ),
  );
  return new Map(found.flat().map((doc) => [doc._id, doc.fee]));
}
