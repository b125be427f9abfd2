import { badInput } from '../../../shared/infra/errors';
import type { AccountDraft, AccountFields, AccountPatch, Adjustment, LinkedAccountsRef } from '../../store/accounts';
import type { TaggedKey } from '../../store/tagged-store';
import { lookupString, newId, readTaggedUpdate } from '../common/identify';
import { isGiven, optionalArg, readCreate, requiredArg, type Args, type FieldRules } from '../common/input';
import { sortableFields } from '../common/listing';
import { bigInt, bool, email, mobile, nonNegativeBigInt, nonNegativeInt, oneOf, tag, tagList, text, type Parse } from '../common/validate';

export const accountRules: FieldRules<Omit<AccountFields, '_id'>> = {
  account_tag: { parse: tag, required: true },
  // Prepaid is the safe default: calls are limited by the balance.
  type: { parse: oneOf(['PREPAID', 'POSTPAID'] as const), fallback: () => 'PREPAID' },
  balance: { parse: bigInt, fallback: () => 0n },
  active: { parse: bool, fallback: () => true },
  max_concurrent_transactions: { parse: nonNegativeInt, nullable: true },
  name: { parse: text(), nullable: true },
  notification_email: { parse: email, nullable: true },
  notification_mobile: { parse: mobile, nullable: true },
  carrier_tags: { parse: tagList, nullable: true },
  carrier_tags_override: { parse: tagList, nullable: true },
  customer_tag: { parse: tag, nullable: true },
  pricelist_tags: { parse: tagList, nullable: true },
  tags: { parse: tagList, nullable: true },
  balance_alert_threshold: { parse: bigInt, nullable: true },
  // Spend limits (docs/AGENT.md): money amounts, never below zero.
  max_call_cost: { parse: nonNegativeBigInt, nullable: true },
  hourly_spend_limit: { parse: nonNegativeBigInt, nullable: true },
  daily_spend_limit: { parse: nonNegativeBigInt, nullable: true },
};

export const accountSortable = sortableFields([
  'account_tag',
  'type',
  'balance',
  'active',
  'max_concurrent_transactions',
  'name',
  'notification_email',
  'customer_tag',
  'balance_alert_threshold',
  'max_call_cost',
  'hourly_spend_limit',
  'daily_spend_limit',
]);

const idList: Parse<string[]> = (field, value) => {
  if (!Array.isArray(value)) throw badInput(field, 'must be a list');
  const ids = value.map((v) => lookupString(field, v));
  if (new Set(ids).size !== ids.length) throw badInput(field, 'lists an account more than once');
  return ids;
};

/**
 * Parents by tag or by id; undefined when neither argument is given. An explicit null clears the
 * links (linked_accounts is [] rather than null when empty).
 */
export function readLinkedAccounts(args: Args): LinkedAccountsRef | undefined {
  const byTag = isGiven(args, 'linked_accounts');
  const byId = isGiven(args, 'linked_accountsIds');
  if (byTag && byId) throw badInput('linked_accountsIds', 'give linked_accounts or linked_accountsIds, not both');
  if (byId) return { ids: args.linked_accountsIds === null ? [] : idList('linked_accountsIds', args.linked_accountsIds) };
  if (byTag) return { tags: args.linked_accounts === null ? [] : tagList('linked_accounts', args.linked_accounts) };
  return undefined;
}

/** Most characters of an adjustment's reason (kept in the ledger entry, shown to operators). */
export const MAX_REASON_LENGTH = 200;
const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{8,100}$/;

const nonZeroBigInt: Parse<bigint> = (field, value) => {
  const n = bigInt(field, value);
  if (n === 0n) throw badInput(field, 'must not be 0');
  return n;
};

const reason: Parse<string> = (field, value) => {
  const trimmed = typeof value === 'string' ? value.trim() : '';
  if (trimmed.length < 1 || trimmed.length > MAX_REASON_LENGTH)
    throw badInput(field, `must be 1 to ${MAX_REASON_LENGTH} characters (surrounding blanks are removed)`);
  return trimmed;
};

const idempotencyKey: Parse<string> = (field, value) => {
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY.test(value)) {
    throw badInput(field, 'must be 8 to 100 characters of letters, digits, ".", "_", ":" and "-"');
  }
  return value;
};

/** adjustBalance's arguments; every check comes before anything is written. */
export function readAdjustment(args: Args): Adjustment {
  return {
    account_tag: requiredArg(args, 'account_tag', lookupString),
    amount: requiredArg(args, 'amount', nonZeroBigInt),
    reason: requiredArg(args, 'reason', reason),
    key: optionalArg(args, 'idempotency_key', idempotencyKey) ?? null,
  };
}

export function readAccountCreate(args: Args): AccountDraft {
  return {
    _id: newId(args),
    ...(readCreate(accountRules, args) as Omit<AccountFields, '_id'>),
    linked: readLinkedAccounts(args) ?? { tags: [] },
  };
}

export function readAccountUpdate(args: Args): { key: TaggedKey; patch: AccountPatch } {
  const { key, patch } = readTaggedUpdate(args, 'account_tag', accountRules);
  const linked = readLinkedAccounts(args);
  return { key, patch: linked ? { ...patch, linked } : patch };
}
