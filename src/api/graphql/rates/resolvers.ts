import type { PricelistRateDoc } from '../../../shared/domain/types';
import type { RateFilter } from '../../store/rates';
import type { ApiContext, ApiResolvers } from '../context';
import type { Args } from '../common/input';
import { readListWindow, type ListArgs } from '../common/listing';
import { rateSortable, readRateCreate, readRateKey, readRateUpdate } from './input';

const countRates = async (_root: unknown, args: ListArgs<RateFilter>, { stores }: ApiContext) => ({
  count: await stores.rates.count(args.filter ?? {}),
});

export const rateResolvers: ApiResolvers = {
  Query: {
    PricelistRate: (_root: unknown, args: Args, { stores }: ApiContext) => stores.rates.find(readRateKey(args)),
    allPricelistRates: (_root: unknown, args: ListArgs<RateFilter>, { stores }: ApiContext) =>
      stores.rates.list(args.filter ?? {}, readListWindow(args, rateSortable)),
    _allPricelistRatesMeta: countRates,
    _allPricelistRates: countRates,
  },
  Mutation: {
    createPricelistRate: (_root: unknown, args: Args, { stores }: ApiContext) => stores.rates.create(readRateCreate(args)),
    updatePricelistRate: (_root: unknown, args: Args, { stores }: ApiContext) => {
      const { key, patch } = readRateUpdate(args);
      return stores.rates.update(key, patch);
    },
    deletePricelistRate: (_root: unknown, args: Args, { stores }: ApiContext) => stores.rates.delete(readRateKey(args)),
  },
  PricelistRate: {
    id: (rate: PricelistRateDoc) => rate._id,
    previous_versions: (rate: PricelistRateDoc) => rate.previous_versions ?? [],
  },
};
