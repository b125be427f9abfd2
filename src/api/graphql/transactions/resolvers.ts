import type { TransactionDoc } from '../../../shared/domain/types';
import type { TransactionFilter } from '../../store/transactions';
import type { ApiContext, ApiResolvers } from '../context';
import type { Args } from '../common/input';
import { readListWindow, type ListArgs } from '../common/listing';
import { readTransactionCreate, readTransactionKey, readTransactionUpdate, transactionSortable } from './input';

const countTransactions = async (_root: unknown, args: ListArgs<TransactionFilter>, { stores }: ApiContext) => ({
  count: await stores.transactions.count(args.filter ?? {}),
});

export const transactionResolvers: ApiResolvers = {
  Query: {
    Transaction: (_root: unknown, args: Args, { stores }: ApiContext) => stores.transactions.find(readTransactionKey(args)),
    allTransactions: (_root: unknown, args: ListArgs<TransactionFilter>, { stores }: ApiContext) =>
      stores.transactions.list(args.filter ?? {}, readListWindow(args, transactionSortable)),
    _allTransactionsMeta: countTransactions,
    _allTransactions: countTransactions,
  },
  Mutation: {
    createTransaction: (_root: unknown, args: Args, { stores }: ApiContext) => stores.transactions.create(readTransactionCreate(args)),
    updateTransaction: (_root: unknown, args: Args, { stores }: ApiContext) => {
      const { key, patch } = readTransactionUpdate(args);
      return stores.transactions.update(key, patch);
    },
    deleteTransaction: (_root: unknown, args: Args, { stores }: ApiContext) => stores.transactions.delete(readTransactionKey(args)),
  },
  Transaction: {
    id: (record: TransactionDoc) => record._id,
    account: (record: TransactionDoc, _args: Args, { stores }: ApiContext) => stores.accounts.find({ tag: record.account_tag }),
  },
};
