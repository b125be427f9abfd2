import type { AppContext } from '../../../shared/domain/context';
import type { ImportRejectDoc, UploadDoc } from '../../../shared/domain/imports';
import { ImportStore, type ImportFilter } from '../../store/imports';
import type { ApiContext, ApiResolvers } from '../context';
import { requiredArg, type Args } from '../common/input';
import { readListWindow, sortableFields, type ListArgs } from '../common/listing';
import { intBetween, lookup } from '../common/validate';

export const importSortable = sortableFields([
  'name',
  'state',
  'lines',
  'done',
  'accepted',
  'recorded',
  'rejected',
  'created_at',
  'started_at',
  'finished_at',
]);

/** One store per process context (it holds nothing but the context's database and read limits). */
const stores = new WeakMap<AppContext, ImportStore>();

function importStore(ctx: AppContext): ImportStore {
  let store = stores.get(ctx);
  if (!store) {
    store = new ImportStore(ctx.mongo.db, { maxTimeMS: ctx.config.mongoMaxTimeMs });
    stores.set(ctx, store);
  }
  return store;
}

const rejectLimit = intBetween(1, 10_000);

export const importResolvers: ApiResolvers = {
  Query: {
    Import: (_root: unknown, args: Args, { ctx }: ApiContext) => importStore(ctx).find(requiredArg(args, 'id', lookup)),
    allImports: (_root: unknown, args: ListArgs<ImportFilter>, { ctx }: ApiContext) =>
      importStore(ctx).list(args.filter ?? {}, readListWindow(args, importSortable)),
    _allImportsMeta: async (_root: unknown, args: ListArgs<ImportFilter>, { ctx }: ApiContext) => ({
      count: await importStore(ctx).count(args.filter ?? {}),
    }),
  },
  Import: {
    id: (doc: UploadDoc) => doc._id,
    name: (doc: UploadDoc) => doc.name ?? null,
    lines: (doc: UploadDoc) => doc.lines ?? 0,
    done: (doc: UploadDoc) => doc.done ?? 0,
    accepted: (doc: UploadDoc) => doc.accepted ?? 0,
    recorded: (doc: UploadDoc) => doc.recorded ?? 0,
    rejected: (doc: UploadDoc) => doc.rejected ?? 0,
    created_at: (doc: UploadDoc) => doc.created_at ?? null,
    started_at: (doc: UploadDoc) => doc.started_at ?? null,
    finished_at: (doc: UploadDoc) => doc.finished_at ?? null,
    error: (doc: UploadDoc) => doc.error ?? null,
    rejects: (doc: UploadDoc, args: Args, { ctx }: ApiContext) =>
      importStore(ctx).rejects(doc._id, rejectLimit('limit', args.limit ?? 100)),
  },
  ImportReject: {
    account_tag: (doc: ImportRejectDoc) => doc.account_tag ?? null,
  },
};
