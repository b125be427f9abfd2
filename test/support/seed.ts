import { randomUUID } from 'node:crypto';
import {
  callId,
  type AccountDoc,
  type CarrierDoc,
  type PricelistDoc,
  type PricelistRateDoc,
  type RunningTransaction,
} from '../../src/shared/domain/types';
import type { AppContext } from '../../src/shared/domain/context';
import { announceRatingDataChange } from '../../src/shared/domain/rating-data/cache';

/** Test data written straight to the store (the agent tests do not depend on the management API). */
export function carrier(tag: string, overrides: Partial<CarrierDoc> = {}): CarrierDoc {
  return { _id: randomUUID(), carrier_tag: tag, host: `${tag}.example.net`, port: 5060, protocol: 'UDP', active: true, ...overrides };
}

export function pricelist(tag: string, overrides: Partial<PricelistDoc> = {}): PricelistDoc {
  return { _id: randomUUID(), pricelist_tag: tag, name: tag, currency: 'USD', ...overrides };
}

export function rate(
  pricelistTag: string,
  carrierTag: string,
  prefix: string,
  overrides: Partial<PricelistRateDoc> = {},
): PricelistRateDoc {
  return {
    _id: randomUUID(),
    pricelist_tag: pricelistTag,
    carrier_tag: carrierTag,
    prefix,
    datetime_start: null,
    datetime_end: null,
    connect_fee: 0,
    rate: 20,
    rate_increment: 60,
    interval_start: 0,
    description: null,
    ...overrides,
  };
}

/**
 * A running entry of `caller`'s call `tag` (in progress, begun now, 60 per minute in 1 s steps), as
 * begin writes it: for tests that put a call's state straight into the store.
 */
export function runningEntry(tag: string, overrides: Partial<RunningTransaction> = {}): RunningTransaction {
  const caller = overrides.origin_account_tag ?? 'caller';
  return {
    id: `entry-${tag}`,
    transaction_tag: tag,
    origin_account_tag: caller,
    call_id: callId(caller, tag),
    source: '100',
    destination: '3932',
    carrier_ip: '10.0.0.1:5060',
    rate: { pricelist_tag: 'pl', carrier_tag: 'c1', prefix: '39', connect_fee: 0, rate: 60, rate_increment: 1, interval_start: 0 },
    in_progress: true,
    inbound: false,
    timestamp_begin: new Date(),
    timestamp_end: null,
    ...overrides,
  };
}

/** An account as createAccount makes it: its opening balance is its balance (rating audit folds the ledger onto it). */
export function account(tag: string, overrides: Partial<AccountDoc> = {}): AccountDoc {
  const balance = overrides.balance ?? 100n;
  return {
    opening_balance: balance,
    _id: randomUUID(),
    account_tag: tag,
    type: 'PREPAID',
    balance: 100n,
    active: true,
    max_concurrent_transactions: null,
    name: tag,
    notification_email: null,
    notification_mobile: null,
    carrier_tags: null,
    carrier_tags_override: null,
    customer_tag: null,
    linked_accounts: [],
    pricelist_tags: ['pl'],
    tags: null,
    running_transactions: [],
    ...overrides,
  };
}

/**
 * Rating data where a call of n seconds costs `connectFee + n` (60 per minute, 1 s increments) on
 * destinations under `prefix`: expected balances are plain sums.
 */
export function perSecondRating(prefix = '39', connectFee = 1): Required<Pick<Seed, 'carriers' | 'pricelists' | 'rates'>> {
  return {
    carriers: [carrier('c1')],
    pricelists: [pricelist('pl')],
    rates: [rate('pl', 'c1', prefix, { rate: 60, rate_increment: 1, connect_fee: connectFee })],
  };
}

export interface Seed {
  carriers?: CarrierDoc[];
  pricelists?: PricelistDoc[];
  rates?: PricelistRateDoc[];
  accounts?: AccountDoc[];
}

export async function seed(ctx: AppContext, data: Seed): Promise<void> {
  const c = ctx.mongo.collections;
  if (data.carriers?.length) await c.carriers.insertMany(data.carriers);
  if (data.pricelists?.length) await c.pricelists.insertMany(data.pricelists);
  if (data.rates?.length) await c.rates.insertMany(data.rates);
  if (data.accounts?.length) await c.accounts.insertMany(data.accounts);
  if (data.carriers?.length || data.rates?.length) await announceRatingDataChange(ctx);
}
