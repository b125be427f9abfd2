import { type AccountDoc, isReservation, type RunningTransaction } from '../../../shared/domain/types';
import { formatDateTime } from '../../../shared/domain/graphql-scalars';
import type { AccountFilter } from '../../store/accounts';
import type { ApiContext, ApiResolvers } from '../context';
import { lookupString, readTaggedKey } from '../common/identify';
import { optionalArg, requiredArg, type Args } from '../common/input';
import { readListWindow, type ListArgs } from '../common/listing';
import { bigInt, number } from '../common/validate';
import { asRateDoc, routeNow } from '../routing/route';
import { accountSortable, readAccountCreate, readAccountUpdate, readAdjustment } from './input';

/** Least-cost routing for a call by this account to the `destination` argument, if one is given. */
async function routeForAccount(account: AccountDoc, args: Args, { ratingData }: ApiContext) {
  const to = optionalArg(args, 'destination', number);
  if (to === undefined) return null;
  return routeNow(ratingData, {
    destination: to,
    pricelistTags: account.pricelist_tags,
    carrierTags: account.carrier_tags,
    carrierTagsOverride: account.carrier_tags_override,
  });
}

export const accountResolvers: ApiResolvers = {
  Query: {
    Account: (_root: unknown, args: Args, { stores }: ApiContext) => stores.accounts.find(readTaggedKey(args, 'account_tag')),
    allAccounts: (_root: unknown, args: ListArgs<AccountFilter>, { stores }: ApiContext) =>
      stores.accounts.list(args.filter ?? {}, readListWindow(args, accountSortable)),
    _allAccountsMeta: async (_root: unknown, args: ListArgs<AccountFilter>, { stores }: ApiContext) => ({
      count: await stores.accounts.count(args.filter ?? {}),
    }),
  },
  Mutation: {
    createAccount: (_root: unknown, args: Args, { stores }: ApiContext) => stores.accounts.create(readAccountCreate(args)),
    updateAccount: (_root: unknown, args: Args, { stores }: ApiContext) => {
      const { key, patch } = readAccountUpdate(args);
      return stores.accounts.update(key, patch);
    },
    deleteAccount: (_root: unknown, args: Args, { stores }: ApiContext) => stores.accounts.delete(readTaggedKey(args, 'account_tag')),
    incrementAccountBalance: (_root: unknown, args: Args, { stores }: ApiContext) =>
      stores.accounts.incrementBalance(requiredArg(args, 'account_tag', lookupString), requiredArg(args, 'amount', bigInt)),
    adjustBalance: (_root: unknown, args: Args, { stores }: ApiContext) => stores.accounts.adjustBalance(readAdjustment(args)),
  },
  Account: {
    id: (account: AccountDoc) => account._id,
    linked_accounts: (account: AccountDoc, _args: Args, { stores }: ApiContext) =>
      stores.accounts.findByTags(account.linked_accounts ?? []),
    // Reservations are slots held for calls not begun yet, not calls.
    running_transactions: (account: AccountDoc) => (account.running_transactions ?? []).filter((e) => !isReservation(e)),
    destination_rate: async (account: AccountDoc, args: Args, context: ApiContext) => {
      const route = await routeForAccount(account, args, context);
      return route && route.length > 0 ? asRateDoc(route[0].rate) : null;
    },
    least_cost_routing: async (account: AccountDoc, args: Args, context: ApiContext) => {
      const route = await routeForAccount(account, args, context);
      return route ? route.map((c) => c.routeString) : null;
    },
  },
  AccountTransaction: {
    destination_rate: (entry: RunningTransaction) => entry.rate?.rate ?? null,
    timestamp_end: (entry: RunningTransaction) => (entry.timestamp_end ? formatDateTime(entry.timestamp_end) : ''),
  },
};
