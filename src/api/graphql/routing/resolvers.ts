import type { ApiContext, ApiResolvers } from '../context';
import { optionalArg, requiredArg, type Args } from '../common/input';
import { number, tagList } from '../common/validate';
import { routeNow } from './route';

export const routingResolvers: ApiResolvers = {
  Query: {
    leastCostRouting: async (_root: unknown, args: Args, { ratingData }: ApiContext) => {
      const candidates = await routeNow(ratingData, {
        destination: requiredArg(args, 'destination', number),
        pricelistTags: optionalArg(args, 'pricelist_tags', tagList) ?? null,
        carrierTags: optionalArg(args, 'carrier_tags', tagList) ?? null,
        carrierTagsOverride: optionalArg(args, 'carrier_tags_override', tagList) ?? null,
      });
      return candidates.map((c) => c.routeString);
    },
  },
};
