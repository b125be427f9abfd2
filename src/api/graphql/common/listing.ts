import { badInput } from '../../../shared/infra/errors';
import type { ListWindow, SortDirection } from '../../store/documents';

/** Arguments of every `allXs` / `_allXsMeta` query (ra-data-graphql-simple conventions). */
export interface ListArgs<F = Record<string, unknown>> {
  page?: number | null;
  perPage?: number | null;
  sortField?: string | null;
  sortOrder?: string | null;
  filter?: F | null;
}

export const DEFAULT_PER_PAGE = 25;
export const MAX_PER_PAGE = 1000;

/**
 * Pages start at 0; perPage defaults to 25 and is at most 1000; sortField defaults to `id` and
 * must be one of `sortable` (GraphQL field -> stored path); sortOrder is asc or desc, any case
 * (react-admin sends ASC/DESC).
 */
export function readListWindow(args: ListArgs<unknown>, sortable: Readonly<Record<string, string>>): ListWindow {
  const page = args.page ?? 0;
  const perPage = args.perPage ?? DEFAULT_PER_PAGE;
  if (!Number.isSafeInteger(page) || page < 0) throw badInput('page', 'must be 0 or more (pages start at 0)');
  if (!Number.isSafeInteger(perPage) || perPage < 1 || perPage > MAX_PER_PAGE) {
    throw badInput('perPage', `must be from 1 to ${MAX_PER_PAGE}`);
  }
  const skip = page * perPage;
  if (!Number.isSafeInteger(skip)) throw badInput('page', 'is too large');

  const sortField = args.sortField ?? 'id';
  const path = Object.prototype.hasOwnProperty.call(sortable, sortField) ? sortable[sortField] : undefined;
  if (path === undefined) throw badInput('sortField', `must be one of ${Object.keys(sortable).join(', ')}`);
  const order = (args.sortOrder ?? 'asc').toLowerCase();
  if (order !== 'asc' && order !== 'desc') throw badInput('sortOrder', 'must be asc or desc');
  const direction: SortDirection = order === 'asc' ? 1 : -1;
  const sort: Array<[string, SortDirection]> = [[path, direction]];
  if (path !== '_id') sort.push(['_id', direction]);
  return { skip, limit: perPage, sort };
}

/** Sortable fields: every listed GraphQL field is stored under its own name, except `id`. */
export function sortableFields(fields: readonly string[]): Record<string, string> {
  return Object.fromEntries([['id', '_id'], ...fields.map((f) => [f, f])]);
}
