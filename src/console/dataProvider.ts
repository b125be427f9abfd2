import { HttpLink } from '@apollo/client';
import type { DataProvider, RaRecord, UpdateParams } from 'react-admin';
import buildGraphQLProvider from 'ra-data-graphql-simple';
import { apiFetch } from './graphql';

/**
 * ra-data-graphql-simple over /graphql. Every request carries the token stored at login
 * (apiFetch reads it per request, so logging in again needs no new provider).
 *
 * BigInt fields (balances, fees, thresholds) arrive as JSON numbers, or as decimal strings past
 * 2^53; the provider passes both through untouched and the API accepts both back.
 */
function buildProvider(): DataProvider {
  const link = new HttpLink({ uri: '/graphql', fetch: (input, init) => apiFetch(String(input), init ?? {}) });
  return buildGraphQLProvider({ clientOptions: { link } });
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * An account update sends only what the form changed (updateAccount leaves omitted arguments
 * unchanged). Sending the whole record would write back the balance as it was when the form
 * loaded and undo every charge made since; balances move through adjustBalance only.
 */
function accountChanges(params: UpdateParams): UpdateParams {
  const previous = (params.previousData ?? {}) as Record<string, unknown>;
  const data = params.data as Record<string, unknown>;
  const changed: Record<string, unknown> = { id: params.id };
  for (const [key, value] of Object.entries(data)) {
    if (key === 'id' || key === 'linked_accounts' || key === 'running_transactions' || key === 'balance') continue;
    if (!sameValue(value, previous[key])) changed[key] = value;
  }
  return { ...params, data: changed };
}

/**
 * The data provider the console uses. A failed schema introspection (API down, token refused) is
 * cached by ra-data-graphql; this wrapper starts over after a failure so the next request retries.
 */
export function createDataProvider(): DataProvider {
  let inner: DataProvider = buildProvider();
  const ready = async (): Promise<DataProvider> => {
    const current = inner;
    const introspect = (current as DataProvider & { getIntrospection?: () => Promise<unknown> }).getIntrospection;
    if (introspect) {
      try {
        await introspect();
      } catch (error) {
        if (inner === current) inner = buildProvider();
        throw error;
      }
    }
    return current;
  };
  return {
    getList: async (resource, params) => (await ready()).getList(resource, params),
    getOne: async (resource, params) => (await ready()).getOne(resource, params),
    getMany: async (resource, params) => (await ready()).getMany(resource, params),
    getManyReference: async (resource, params) => (await ready()).getManyReference(resource, params),
    create: async (resource, params) => (await ready()).create(resource, params),
    update: async <T extends RaRecord>(resource: string, params: UpdateParams) =>
      (await ready()).update<T>(resource, resource === 'Account' ? accountChanges(params) : params),
    updateMany: async (resource, params) => (await ready()).updateMany(resource, params),
    delete: async (resource, params) => (await ready()).delete(resource, params),
    deleteMany: async (resource, params) => (await ready()).deleteMany(resource, params),
  };
}
