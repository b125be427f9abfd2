import type { PricelistDoc } from '../../../shared/domain/types';
import type { PricelistFilter } from '../../store/pricelists';
import type { ApiContext, ApiResolvers } from '../context';
import type { Args } from '../common/input';
import { readListWindow, type ListArgs } from '../common/listing';
import { pricelistSortable, readPricelistCreate, readPricelistKey, readPricelistUpdate } from './input';

export const pricelistResolvers: ApiResolvers = {
  Query: {
    Pricelist: (_root: unknown, args: Args, { stores }: ApiContext) => stores.pricelists.find(readPricelistKey(args)),
    allPricelists: (_root: unknown, args: ListArgs<PricelistFilter>, { stores }: ApiContext) =>
      stores.pricelists.list(args.filter ?? {}, readListWindow(args, pricelistSortable)),
    _allPricelistsMeta: async (_root: unknown, args: ListArgs<PricelistFilter>, { stores }: ApiContext) => ({
      count: await stores.pricelists.count(args.filter ?? {}),
    }),
  },
  Mutation: {
    createPricelist: (_root: unknown, args: Args, { stores }: ApiContext) => stores.pricelists.create(readPricelistCreate(args)),
    updatePricelist: (_root: unknown, args: Args, { stores }: ApiContext) => {
      const { key, patch } = readPricelistUpdate(args);
      return stores.pricelists.update(key, patch);
    },
    deletePricelist: (_root: unknown, args: Args, { stores }: ApiContext) => stores.pricelists.delete(readPricelistKey(args)),
  },
  Pricelist: {
    id: (pricelist: PricelistDoc) => pricelist._id,
  },
};
