import type { CarrierDoc } from '../../../shared/domain/types';
import type { CarrierFilter } from '../../store/carriers';
import type { ApiContext, ApiResolvers } from '../context';
import { readTaggedKey } from '../common/identify';
import type { Args } from '../common/input';
import { readListWindow, type ListArgs } from '../common/listing';
import { carrierSortable, readCarrierCreate, readCarrierUpdate } from './input';

export const carrierResolvers: ApiResolvers = {
  Query: {
    Carrier: (_root: unknown, args: Args, { stores }: ApiContext) => stores.carriers.find(readTaggedKey(args, 'carrier_tag')),
    allCarriers: (_root: unknown, args: ListArgs<CarrierFilter>, { stores }: ApiContext) =>
      stores.carriers.list(args.filter ?? {}, readListWindow(args, carrierSortable)),
    _allCarriersMeta: async (_root: unknown, args: ListArgs<CarrierFilter>, { stores }: ApiContext) => ({
      count: await stores.carriers.count(args.filter ?? {}),
    }),
  },
  Mutation: {
    createCarrier: (_root: unknown, args: Args, { stores }: ApiContext) => stores.carriers.create(readCarrierCreate(args)),
    updateCarrier: (_root: unknown, args: Args, { stores }: ApiContext) => {
      const { key, patch } = readCarrierUpdate(args);
      return stores.carriers.update(key, patch);
    },
    deleteCarrier: (_root: unknown, args: Args, { stores }: ApiContext) => stores.carriers.delete(readTaggedKey(args, 'carrier_tag')),
  },
  Carrier: {
    id: (carrier: CarrierDoc) => carrier._id,
  },
};
