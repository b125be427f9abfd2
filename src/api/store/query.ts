import type { Filter } from 'mongodb';
import { badInput } from '../../shared/infra/errors';

/**
 * Builders of MongoDB filters from the members of a GraphQL filter input. A member that is null or
 * omitted adds no condition.
 */

/** Conjunction of filter conditions. */
export function allOf<T>(conditions: Array<Filter<T>>): Filter<T> {
  if (conditions.length === 0) return {};
  if (conditions.length === 1) return conditions[0];
  return { $and: conditions } as Filter<T>;
}

/** A filter value given as one string or a list of them (the spec documents both). */
export function oneOrMany(value: string | readonly string[] | null | undefined): string[] | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'string' ? [value] : [...value];
}

/** `path` equal to one of the values, or nothing when the filter member was not given. */
export function matchAny<T>(path: string, value: string | readonly string[] | null | undefined): Array<Filter<T>> {
  const values = oneOrMany(value);
  if (values === undefined) return [];
  return [{ [path]: values.length === 1 ? values[0] : { $in: values } } as Filter<T>];
}

/** `path` equal to a scalar, when given. */
export function matchValue<T>(path: string, value: unknown): Array<Filter<T>> {
  return value === null || value === undefined ? [] : [{ [path]: value } as Filter<T>];
}

/** The `id` and `ids` members every filter has. */
export function idConditions<T>(filter: { id?: string | null; ids?: readonly string[] | null }): Array<Filter<T>> {
  return [...matchValue<T>('_id', filter.id), ...(filter.ids ? [{ _id: { $in: [...filter.ids] } } as Filter<T>] : [])];
}

const RANGE_OPERATORS = { _gte: '$gte', _gt: '$gt', _lte: '$lte', _lt: '$lt' } as const;

/** `<name>_gte`, `_gt`, `_lte`, `_lt` members of a filter applied to `path`. */
export function rangeConditions<T>(path: string, name: string, filter: Record<string, unknown>): Array<Filter<T>> {
  const bounds: Record<string, unknown> = {};
  for (const [suffix, operator] of Object.entries(RANGE_OPERATORS)) {
    const value = filter[`${name}${suffix}`];
    if (value !== null && value !== undefined) bounds[operator] = value;
  }
  return Object.keys(bounds).length === 0 ? [] : [{ [path]: bounds } as Filter<T>];
}

/** Longest `q` accepted: a search box, not a document. */
export const MAX_SEARCH_LENGTH = 100;

/**
 * The react-admin full-text filter `q`: a case-insensitive substring of any of `paths`. The text is
 * matched literally (regular-expression characters are escaped), so a search box can never send a
 * pattern. Blank or omitted adds no condition.
 */
export function textSearch<T>(q: string | null | undefined, paths: readonly string[]): Array<Filter<T>> {
  if (q === null || q === undefined) return [];
  const text = q.trim();
  if (text === '') return [];
  if (text.length > MAX_SEARCH_LENGTH) throw badInput('q', `must be at most ${MAX_SEARCH_LENGTH} characters`);
  const pattern = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [{ $or: paths.map((path) => ({ [path]: { $regex: pattern, $options: 'i' } })) } as Filter<T>];
}
