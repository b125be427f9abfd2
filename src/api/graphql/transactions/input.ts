import { badInput } from '../../../shared/infra/errors';
import type { RateSnapshot, TransactionDoc } from '../../../shared/domain/types';
import type { TransactionKey, TransactionPatch } from '../../store/transactions';
import { lookupString, newId } from '../common/identify';
import { optionalArg, readCreate, readPatch, type Args, type FieldRules } from '../common/input';
import { sortableFields } from '../common/listing';
import {
  address,
  bool,
  dateTime,
  nonNegativeBigInt,
  nonNegativeInt,
  number,
  prefix,
  tag,
  tagList,
  text,
  TextLimits,
  type Parse,
} from '../common/validate';

const snapshotRules: FieldRules<RateSnapshot> = {
  pricelist_tag: { parse: tag, required: true },
  carrier_tag: { parse: tag, required: true },
  prefix: { parse: prefix, required: true },
  connect_fee: { parse: nonNegativeInt, fallback: () => 0 },
  rate: { parse: nonNegativeInt, required: true },
  rate_increment: { parse: nonNegativeInt, fallback: () => 1 },
  interval_start: { parse: nonNegativeInt, fallback: () => 0 },
  description: { parse: text(TextLimits.DESCRIPTION), nullable: true },
};

const rateSnapshot: Parse<RateSnapshot> = (field, value) => {
  if (typeof value !== 'object' || value === null) throw badInput(field, 'must be an object');
  return readCreate(snapshotRules, value as Args, `${field}.`) as RateSnapshot;
};

export const transactionRules: FieldRules<Omit<TransactionDoc, '_id' | 'state' | 'call_parties'>> = {
  transaction_tag: { parse: tag, required: true },
  account_tag: { parse: tag, required: true },
  source: { parse: number, nullable: true },
  source_ip: { parse: address, nullable: true },
  destination: { parse: number, nullable: true },
  carrier_ip: { parse: address, nullable: true },
  tags: { parse: tagList, nullable: true },
  authorized: { parse: bool, nullable: true },
  unauthorized_reason: { parse: text(), nullable: true },
  destination_rate: { parse: rateSnapshot, nullable: true },
  timestamp_auth: { parse: dateTime, nullable: true },
  timestamp_begin: { parse: dateTime, nullable: true },
  timestamp_end: { parse: dateTime, nullable: true },
  inbound: { parse: bool, fallback: () => false },
  failed: { parse: bool, fallback: () => false },
  duration: { parse: nonNegativeInt, fallback: () => 0 },
  fee: { parse: nonNegativeBigInt, fallback: () => 0n },
};

export const transactionSortable = sortableFields([
  'transaction_tag',
  'account_tag',
  'source',
  'destination',
  'timestamp_auth',
  'timestamp_begin',
  'timestamp_end',
  'inbound',
  'failed',
  'duration',
  'fee',
]);

/** By id, or by account_tag and transaction_tag together. */
export function readTransactionKey(args: Args): TransactionKey {
  const id = optionalArg(args, 'id', lookupString);
  if (id !== undefined) return { id };
  const accountTag = optionalArg(args, 'account_tag', lookupString);
  const transactionTag = optionalArg(args, 'transaction_tag', lookupString);
  if (accountTag === undefined || transactionTag === undefined) {
    throw badInput('id', 'give id, or account_tag and transaction_tag');
  }
  return { account_tag: accountTag, transaction_tag: transactionTag };
}

export function readTransactionCreate(args: Args): TransactionDoc {
  return { _id: newId(args), ...readCreate(transactionRules, args) } as TransactionDoc;
}

/** With an id, account_tag and transaction_tag are changes; otherwise they name the record. */
export function readTransactionUpdate(args: Args): { key: TransactionKey; patch: TransactionPatch } {
  const key = readTransactionKey(args);
  const skip = 'id' in key ? [] : ['account_tag', 'transaction_tag'];
  return { key, patch: readPatch(transactionRules, args, skip) as TransactionPatch };
}
