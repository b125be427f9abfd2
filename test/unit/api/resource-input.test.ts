import { readAccountCreate, readAccountUpdate, readLinkedAccounts } from '../../../src/api/graphql/accounts/input';
import { readCarrierCreate } from '../../../src/api/graphql/carriers/input';
import { readPricelistCreate, readPricelistUpdate, withPricelistTag } from '../../../src/api/graphql/pricelists/input';
import { readRateCreate, readRateKey, readRateUpdate } from '../../../src/api/graphql/rates/input';
import { readTransactionCreate, readTransactionKey, readTransactionUpdate } from '../../../src/api/graphql/transactions/input';
import { ServiceError } from '../../../src/shared/infra/errors';

const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ID = '5b0a3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b0c';

function refusedField(action: () => unknown): string | undefined {
  try {
    action();
  } catch (err) {
    if (err instanceof ServiceError) return err.details.field as string;
    throw err;
  }
  return undefined;
}

describe('carrier arguments', () => {
  it('defaults protocol to UDP, active to true and the id to a fresh uuid4', () => {
    const carrier = readCarrierCreate({ carrier_tag: 'c', host: 'h', port: 5060 });
    expect(carrier).toEqual({ _id: expect.stringMatching(UUID4), carrier_tag: 'c', host: 'h', port: 5060, protocol: 'UDP', active: true });
    expect(readCarrierCreate({ carrier_tag: 'c', host: 'h', port: 5060 })._id).not.toBe(carrier._id);
    expect(readCarrierCreate({ id: ID, carrier_tag: 'c', host: 'h', port: 5060 })._id).toBe(ID);
  });
});

describe('pricelist arguments', () => {
  it('accepts tag as an alias of pricelist_tag', () => {
    expect(withPricelistTag({ tag: 'p', name: 'n' })).toEqual({ pricelist_tag: 'p', name: 'n' });
    expect(withPricelistTag({ tag: 'p', pricelist_tag: 'p' })).toEqual({ pricelist_tag: 'p' });
    expect(refusedField(() => withPricelistTag({ tag: 'p', pricelist_tag: 'q' }))).toBe('tag');
    expect(readPricelistCreate({ tag: 'p', currency: 'EUR' })).toMatchObject({ pricelist_tag: 'p', currency: 'EUR', name: null });
    expect(readPricelistUpdate({ id: 'i', tag: 'p2' })).toEqual({ key: { id: 'i' }, patch: { pricelist_tag: 'p2' } });
    expect(readPricelistUpdate({ tag: 'p', name: null })).toEqual({ key: { tag: 'p' }, patch: { name: null } });
  });
});

describe('rate arguments', () => {
  it('names the pricelist and carrier by tag or id, with defaults for the terms', () => {
    expect(readRateCreate({ pricelist_tag: 'p', carrier_id: ID, prefix: '44', rate: 20 })).toEqual({
      _id: expect.stringMatching(UUID4),
      pricelist: { tag: 'p', id: undefined },
      carrier: { tag: undefined, id: ID },
      prefix: '44',
      datetime_start: null,
      datetime_end: null,
      connect_fee: 0,
      rate: 20,
      rate_increment: 1,
      interval_start: 0,
      description: null,
      // No timing: the store writes neither timing nor timing_key (a rate as before timings).
      timing: null,
    });
    expect(refusedField(() => readRateCreate({ carrier_tag: 'c', prefix: '44', rate: 1 }))).toBe('pricelist_tag');
    expect(refusedField(() => readRateCreate({ pricelist_tag: 'p', carrier_tag: 'c', prefix: '44', rate: 1, pricelist_id: 'x' }))).toBe(
      'pricelist_id',
    );
  });

  it('identifies a rate by id or by its pricelist, carrier and prefix', () => {
    expect(readRateKey({ id: 'r' })).toEqual({ id: 'r' });
    expect(readRateKey({ pricelist_id: 'p', carrier_tag: 'c', prefix: '' })).toEqual({
      pricelist: { tag: undefined, id: 'p' },
      carrier: { tag: 'c', id: undefined },
      prefix: '',
    });
    expect(refusedField(() => readRateKey({ pricelist_tag: 'p', carrier_tag: 'c' }))).toBe('id');
  });

  it('treats pricelist, carrier and prefix as changes only when the rate is named by id', () => {
    expect(readRateUpdate({ id: 'r', carrier_tag: 'c2', prefix: '45' })).toEqual({
      key: { id: 'r' },
      patch: { prefix: '45', carrier: { tag: 'c2', id: undefined } },
    });
    expect(readRateUpdate({ pricelist_tag: 'p', carrier_tag: 'c', prefix: '44', rate: 3, description: null })).toEqual({
      key: { pricelist: { tag: 'p', id: undefined }, carrier: { tag: 'c', id: undefined }, prefix: '44' },
      patch: { rate: 3, description: null },
    });
    expect(refusedField(() => readRateUpdate({ id: 'r', carrier_tag: null }))).toBe('carrier_tag');
  });
});

describe('account arguments', () => {
  it('defaults to a prepaid, active account with balance 0 and no links', () => {
    expect(readAccountCreate({ account_tag: 'a' })).toEqual({
      _id: expect.stringMatching(UUID4),
      account_tag: 'a',
      type: 'PREPAID',
      balance: 0n,
      active: true,
      max_concurrent_transactions: null,
      name: null,
      notification_email: null,
      notification_mobile: null,
      carrier_tags: null,
      carrier_tags_override: null,
      customer_tag: null,
      pricelist_tags: null,
      tags: null,
      balance_alert_threshold: null,
      max_call_cost: null,
      hourly_spend_limit: null,
      daily_spend_limit: null,
      linked: { tags: [] },
    });
  });

  it('reads links by tag or by id, null clearing them, never both', () => {
    expect(readLinkedAccounts({})).toBeUndefined();
    expect(readLinkedAccounts({ linked_accounts: ['p'] })).toEqual({ tags: ['p'] });
    expect(readLinkedAccounts({ linked_accounts: null })).toEqual({ tags: [] });
    expect(readLinkedAccounts({ linked_accountsIds: [ID] })).toEqual({ ids: [ID] });
    expect(refusedField(() => readLinkedAccounts({ linked_accounts: ['a'], linked_accountsIds: [ID] }))).toBe('linked_accountsIds');
    expect(refusedField(() => readLinkedAccounts({ linked_accountsIds: [ID, ID] }))).toBe('linked_accountsIds');
    expect(readAccountUpdate({ account_tag: 'a', linked_accounts: null, balance: 5n })).toEqual({
      key: { tag: 'a' },
      patch: { balance: 5n, linked: { tags: [] } },
    });
  });
});

describe('transaction arguments', () => {
  it('defaults flags, duration and fee; validates the rate snapshot with nested field names', () => {
    expect(readTransactionCreate({ transaction_tag: 't', account_tag: 'a' })).toMatchObject({
      inbound: false,
      failed: false,
      duration: 0,
      fee: 0n,
      authorized: null,
      destination_rate: null,
    });
    expect(
      readTransactionCreate({
        transaction_tag: 't',
        account_tag: 'a',
        destination_rate: { pricelist_tag: 'p', carrier_tag: 'c', prefix: '1', rate: 2 },
      }).destination_rate,
    ).toEqual({
      pricelist_tag: 'p',
      carrier_tag: 'c',
      prefix: '1',
      rate: 2,
      connect_fee: 0,
      rate_increment: 1,
      interval_start: 0,
      description: null,
    });
    expect(
      refusedField(() =>
        readTransactionCreate({
          transaction_tag: 't',
          account_tag: 'a',
          destination_rate: { pricelist_tag: 'p', carrier_tag: 'c', prefix: '1' },
        }),
      ),
    ).toBe('destination_rate.rate');
  });

  it('identifies a record by id or by account_tag and transaction_tag', () => {
    expect(readTransactionKey({ id: 'i' })).toEqual({ id: 'i' });
    expect(readTransactionKey({ account_tag: 'a', transaction_tag: 't' })).toEqual({ account_tag: 'a', transaction_tag: 't' });
    expect(refusedField(() => readTransactionKey({ transaction_tag: 't' }))).toBe('id');
    expect(readTransactionUpdate({ id: 'i', account_tag: 'b', fee: 3n })).toEqual({
      key: { id: 'i' },
      patch: { account_tag: 'b', fee: 3n },
    });
    expect(readTransactionUpdate({ account_tag: 'a', transaction_tag: 't', fee: 3n })).toEqual({
      key: { account_tag: 'a', transaction_tag: 't' },
      patch: { fee: 3n },
    });
  });
});
