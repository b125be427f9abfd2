import { ServiceError } from '../../../src/shared/infra/errors';
import { readTaggedKey, readTaggedUpdate } from '../../../src/api/graphql/common/identify';
import { readCreate, readPatch, type FieldRules } from '../../../src/api/graphql/common/input';
import { DEFAULT_PER_PAGE, readListWindow, sortableFields } from '../../../src/api/graphql/common/listing';
import { bool, tag, text } from '../../../src/api/graphql/common/validate';

interface Doc {
  tag: string;
  name: string | null;
  active: boolean;
}

const rules: FieldRules<Doc> = {
  tag: { parse: tag, required: true },
  name: { parse: text(), nullable: true },
  active: { parse: bool, fallback: () => true },
};

function fieldOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (err) {
    if (err instanceof ServiceError) return err.details.field as string;
    throw err;
  }
  return undefined;
}

describe('create and update arguments', () => {
  it('create: validates given fields, applies defaults, refuses missing required ones', () => {
    expect(readCreate(rules, { tag: 't' })).toEqual({ tag: 't', name: null, active: true });
    expect(readCreate(rules, { tag: 't', name: 'n', active: false })).toEqual({ tag: 't', name: 'n', active: false });
    // An explicit null on create means "not given".
    expect(readCreate(rules, { tag: 't', active: null })).toEqual({ tag: 't', name: null, active: true });
    expect(fieldOf(() => readCreate(rules, { name: 'n' }))).toBe('tag');
    expect(fieldOf(() => readCreate(rules, { tag: '' }))).toBe('tag');
    expect(fieldOf(() => readCreate(rules, { rate: {} }, 'destination_rate.'))).toBe('destination_rate.tag');
  });

  it('update: omitted leaves unchanged, null clears nullable fields only', () => {
    expect(readPatch(rules, {})).toEqual({});
    expect(readPatch(rules, { name: null })).toEqual({ name: null });
    expect(readPatch(rules, { active: false, name: undefined })).toEqual({ active: false });
    expect(fieldOf(() => readPatch(rules, { active: null }))).toBe('active');
    expect(readPatch(rules, { tag: 'x', name: 'n' }, ['tag'])).toEqual({ name: 'n' });
  });

  it('identifies a tagged record by id or tag; update renames only when named by id', () => {
    expect(readTaggedKey({ id: 'i' }, 'tag')).toEqual({ id: 'i', tag: undefined });
    expect(readTaggedKey({ tag: 't' }, 'tag')).toEqual({ id: undefined, tag: 't' });
    expect(fieldOf(() => readTaggedKey({}, 'tag'))).toBe('id');
    expect(readTaggedUpdate({ id: 'i', tag: 'new' }, 'tag', rules)).toEqual({ key: { id: 'i' }, patch: { tag: 'new' } });
    expect(readTaggedUpdate({ tag: 't', name: 'n' }, 'tag', rules)).toEqual({ key: { tag: 't' }, patch: { name: 'n' } });
    expect(fieldOf(() => readTaggedUpdate({ name: 'n' }, 'tag', rules))).toBe('id');
  });
});

describe('list window', () => {
  const sortable = sortableFields(['name', 'balance']);

  it('defaults: page 0, 25 per page, by id ascending', () => {
    expect(readListWindow({}, sortable)).toEqual({ skip: 0, limit: DEFAULT_PER_PAGE, sort: [['_id', 1]] });
  });

  it('pages, and sorts by a field with id as tie-breaker in the same direction', () => {
    expect(readListWindow({ page: 2, perPage: 10, sortField: 'balance', sortOrder: 'DESC' }, sortable)).toEqual({
      skip: 20,
      limit: 10,
      sort: [
        ['balance', -1],
        ['_id', -1],
      ],
    });
    expect(readListWindow({ page: null, perPage: null, sortField: null, sortOrder: null }, sortable).limit).toBe(25);
    expect(readListWindow({ perPage: 1000 }, sortable).limit).toBe(1000);
  });

  it.each([
    [{ perPage: 0 }, 'perPage'],
    [{ perPage: 1001 }, 'perPage'],
    [{ page: -1 }, 'page'],
    [{ page: 1.5 }, 'page'],
    [{ sortField: 'secret' }, 'sortField'],
    [{ sortField: 'constructor' }, 'sortField'],
    [{ sortOrder: 'random' }, 'sortOrder'],
  ])('refuses %j', (args, field) => {
    expect(fieldOf(() => readListWindow(args, sortable))).toBe(field);
  });
});
