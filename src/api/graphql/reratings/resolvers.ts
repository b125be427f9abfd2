import type { ReratingDoc } from '../../../shared/domain/rerating';
import type { ReratingFilter } from '../../store/reratings';
import type { ApiContext, ApiResolvers } from '../context';
import { lookupString } from '../common/identify';
import { requiredArg, type Args } from '../common/input';
import { readListWindow, type ListArgs } from '../common/listing';
import { readSample, readSelection, reratingSortable } from './input';

export const reratingResolvers: ApiResolvers = {
  Query: {
    Rerating: (_root: unknown, args: Args, { stores }: ApiContext) => stores.reratings.find(requiredArg(args, 'id', lookupString)),
    allReratings: (_root: unknown, args: ListArgs<ReratingFilter>, { stores }: ApiContext) =>
      stores.reratings.list(args.filter ?? {}, readListWindow(args, reratingSortable)),
    _allReratingsMeta: async (_root: unknown, args: ListArgs<ReratingFilter>, { stores }: ApiContext) => ({
      count: await stores.reratings.count(args.filter ?? {}),
    }),
    reratingPreview: async (_root: unknown, args: Args, { stores, ratingData }: ApiContext) => {
      // Fresh: a dry run usually follows a price change made just before, maybe through another process.
      const selection = readSelection(args);
      return stores.reratings.preview(await ratingData.freshIndex(), selection, readSample(args));
    },
  },
  Mutation: {
    createRerating: (_root: unknown, args: Args, { stores }: ApiContext) => stores.reratings.start(readSelection(args)),
  },
  Rerating: {
    id: (run: ReratingDoc) => run._id,
    from: (run: ReratingDoc) => run.selection.from,
    to: (run: ReratingDoc) => run.selection.to,
    account_tags: (run: ReratingDoc) => run.selection.account_tags,
    pricelist_tag: (run: ReratingDoc) => run.selection.pricelist_tag,
    carrier_tag: (run: ReratingDoc) => run.selection.carrier_tag,
    prefix: (run: ReratingDoc) => run.selection.prefix,
    seen: (run: ReratingDoc) => run.counts.seen,
    changed: (run: ReratingDoc) => run.counts.changed,
    unchanged: (run: ReratingDoc) => run.counts.unchanged,
    skipped: (run: ReratingDoc) => run.counts.skipped,
    batches: (run: ReratingDoc) => run.batch,
  },
};
