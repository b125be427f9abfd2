import buildGraphQLProvider from 'ra-data-graphql-simple';
import type { DataProvider, RaRecord } from 'ra-core';
import type { AccountDoc, PricelistRateDoc, RateVersion, TransactionDoc } from '../../../src/shared/domain/types';
import { account, carrier, pricelist, rate, runningEntry, seed } from '../../support/seed';
import { ApiHarness, startApi } from './api-harness';

/**
 * Issue 32: react-admin's export (`<ExportButton>`, and any screen built on ra-data-graphql-simple)
 * asks getList for 1,000 records with every field of the type selected, the embedded lists included
 * (`running_transactions`, `previous_versions`) and the reference lists (`linked_accounts { id }`).
 * Under the default query limits the unchanged provider must get its 1,000 rows for every resource,
 * with data that fills those lists.
 */

const ROWS = 1005; // more than a page: the export gets 1,000 and the total
const PAGE = 1000;
const CALLS_PER_ACCOUNT = 3;
const PARENTS = 5;

/** Three closed windows before the current version's start (2024-04-01), oldest first. */
function versions(i: number): RateVersion[] {
  const month = (m: number) => new Date(Date.UTC(2024, m, 1));
  return [0, 1, 2].map((m) => ({
    datetime_start: month(m),
    datetime_end: month(m + 1),
    connect_fee: m,
    rate: 10 + m + (i % 7),
    rate_increment: 60,
    interval_start: 0,
    description: `version ${m + 1}`,
  }));
}

describe('react-admin export: getList perPage 1000 with every field (ra-data-graphql-simple, default limits)', () => {
  let api: ApiHarness;
  let dp: DataProvider;
  const parentsOf = new Map<string, string[]>(); // account id -> its parents' ids
  const callsOf = new Map<string, string[]>(); // account id -> transaction tags of its calls (reservations left out)
  const versionsOf = new Map<string, number>(); // rate id -> previous versions
  const accountIds = new Map<string, string>(); // account tag -> id

  beforeAll(async () => {
    api = await startApi();
    dp = buildGraphQLProvider({ clientOptions: { uri: `${api.url}/graphql` } });

    const carriers = Array.from({ length: ROWS }, (_, i) => carrier(`c${String(i).padStart(4, '0')}`));
    const pricelists = Array.from({ length: ROWS }, (_, i) => pricelist(`p${String(i).padStart(4, '0')}`));
    const rates: PricelistRateDoc[] = Array.from({ length: ROWS }, (_, i) =>
      rate('p0000', i % 2 ? 'c0001' : 'c0000', `44${i}`, {
        datetime_start: new Date(Date.UTC(2024, 3, 1)),
        previous_versions: versions(i),
      }),
    );
    for (const r of rates) versionsOf.set(r._id, r.previous_versions!.length);

    const parents = Array.from({ length: PARENTS }, (_, i) => account(`reseller-${i}`, { type: 'POSTPAID', customer_tag: 'resellers' }));
    const customers: AccountDoc[] = Array.from({ length: ROWS - PARENTS }, (_, i) => {
      const tag = `acc-${String(i).padStart(4, '0')}`;
      const linked =
        i % 3 === 0 ? [parents[i % PARENTS].account_tag, parents[(i + 1) % PARENTS].account_tag] : [parents[i % PARENTS].account_tag];
      const calls = Array.from({ length: CALLS_PER_ACCOUNT }, (_, c) =>
        runningEntry(`call-${i}-${c}`, { origin_account_tag: tag, in_progress: c !== 0, timestamp_end: c === 0 ? new Date() : null }),
      );
      // An authorization's reservation: held in the same array, never listed as a call.
      const reservation = runningEntry(`reserved-${i}`, {
        origin_account_tag: tag,
        rate: null,
        reserved_until: new Date(Date.now() + 3_600_000),
      });
      return account(tag, {
        linked_accounts: linked,
        running_transactions: [...calls, reservation],
        max_concurrent_transactions: 10,
        tags: ['export'],
      });
    });
    const accounts = [...parents, ...customers];
    for (const a of accounts) accountIds.set(a.account_tag, a._id);
    for (const a of accounts) {
      parentsOf.set(
        a._id,
        a.linked_accounts.map((tag) => accountIds.get(tag)!),
      );
      callsOf.set(
        a._id,
        a.running_transactions.filter((e) => !e.reserved_until).map((e) => e.transaction_tag),
      );
    }
    await seed(api.ctx, { carriers, pricelists, rates, accounts });

    const records: TransactionDoc[] = Array.from({ length: ROWS }, (_, i) => ({
      _id: `record-${String(i).padStart(4, '0')}`,
      transaction_tag: `done-${i}`,
      account_tag: customers[i % customers.length].account_tag,
      origin_account_tag: customers[i % customers.length].account_tag,
      source: '100',
      source_ip: '10.0.0.9',
      destination: `44${i}`,
      carrier_ip: '10.0.0.1:5060',
      tags: ['export'],
      authorized: true,
      unauthorized_reason: null,
      destination_rate: {
        pricelist_tag: 'p0000',
        carrier_tag: 'c0000',
        prefix: `44${i}`,
        connect_fee: 0,
        rate: 20,
        rate_increment: 60,
        interval_start: 0,
        description: null,
      },
      timestamp_auth: new Date(Date.UTC(2024, 4, 1, 10, 0, 0)),
      timestamp_begin: new Date(Date.UTC(2024, 4, 1, 10, 0, 1)),
      timestamp_end: new Date(Date.UTC(2024, 4, 1, 10, 1, 1)),
      inbound: false,
      failed: false,
      duration: 60,
      fee: 20n,
    }));
    await api.ctx.mongo.collections.transactions.insertMany(records);
  }, 120_000);

  afterAll(async () => {
    await api?.close();
  });

  const exportList = (resource: string) =>
    dp.getList(resource, { pagination: { page: 1, perPage: PAGE }, sort: { field: 'id', order: 'ASC' }, filter: {} });

  it.each(['Carrier', 'Pricelist', 'PricelistRate', 'Account', 'Transaction'])('%s: 1,000 rows and the total', async (resource) => {
    const { data, total } = await exportList(resource);
    expect({ resource, rows: data.length, total }).toEqual({ resource, rows: PAGE, total: ROWS });
  });

  it('Account rows carry their linked accounts and running calls (reservations left out)', async () => {
    const { data } = await exportList('Account');
    const rows = data as Array<
      RaRecord & { linked_accounts: Array<{ id: string }>; running_transactions: Array<{ transaction_tag: string }> }
    >;
    expect(rows.filter((r) => r.linked_accounts.length > 0).length).toBeGreaterThan(900);
    expect(rows.filter((r) => r.running_transactions.length === CALLS_PER_ACCOUNT).length).toBeGreaterThan(900);
    for (const row of rows) {
      expect({ id: row.id, linked: row.linked_accounts.map((a) => a.id) }).toEqual({ id: row.id, linked: parentsOf.get(String(row.id)) });
      expect({ id: row.id, calls: row.running_transactions.map((c) => c.transaction_tag).sort() }).toEqual({
        id: row.id,
        calls: [...callsOf.get(String(row.id))!].sort(),
      });
    }
  });

  it('PricelistRate rows carry their previous versions, oldest first', async () => {
    const { data } = await exportList('PricelistRate');
    for (const row of data as Array<RaRecord & { previous_versions: Array<{ description: string }> }>) {
      expect({ id: row.id, versions: row.previous_versions.length }).toEqual({ id: row.id, versions: versionsOf.get(String(row.id)) });
      expect(row.previous_versions.map((v) => v.description)).toEqual(['version 1', 'version 2', 'version 3']);
    }
  });

  it('Transaction rows carry their account', async () => {
    const { data } = await exportList('Transaction');
    for (const row of data) expect(row['account.id'] ?? row.account?.id).toBe(accountIds.get(String(row.account_tag)));
  });

  it('Import (the uploads, read-only) lists under the same limits', async () => {
    const { data, total } = await exportList('Import');
    expect({ rows: data.length, total }).toEqual({ rows: 0, total: 0 });
  });
});
