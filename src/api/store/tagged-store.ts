import type { Collection, Document, Filter, OptionalUnlessRequiredId, UpdateFilter } from 'mongodb';
import { countMatching, findPage, insertNew, type ListWindow, type ReadLimits } from './documents';
import { notFound, rethrowDuplicate } from './errors';
import { allOf, matchValue } from './query';

/** A record with a uuid `_id` and a unique, operator-chosen tag that other records refer to. */
export type TaggedDoc = Document & { _id: string };

/** Names a record by id, by tag, or both (then they must agree). */
export interface TaggedKey {
  id?: string;
  tag?: string;
}

export interface TaggedStoreOptions<Doc extends TaggedDoc, F> {
  collection: Collection<Doc>;
  /** Singular noun for messages: "carrier". */
  what: string;
  tagField: keyof Doc & string;
  query: (filter: F) => Filter<Doc>;
  /** Refuses renaming or deleting a record other records still refer to by tag. */
  refuseInUse: (tag: string, change: 'rename' | 'delete') => Promise<void>;
  /** Runs after every committed write. */
  afterWrite: () => Promise<void>;
  reads: ReadLimits;
}

/**
 * Create, read, update and delete of a tagged record, each write a single-document atomic
 * operation preceded by every check, so a refused request changes nothing.
 */
export class TaggedStore<Doc extends TaggedDoc, F> {
  constructor(private readonly options: TaggedStoreOptions<Doc, F>) {}

  private keyQuery(key: TaggedKey): Filter<Doc> {
    return allOf<Doc>([...matchValue<Doc>('_id', key.id), ...matchValue<Doc>(this.options.tagField, key.tag)]);
  }

  async find(key: TaggedKey): Promise<Doc | null> {
    if (key.id === undefined && key.tag === undefined) return null;
    return (await this.options.collection.findOne(this.keyQuery(key))) as Doc | null;
  }

  async list(filter: F, window: ListWindow): Promise<Doc[]> {
    return (await findPage(this.options.collection, this.options.query(filter), window, this.options.reads)) as Doc[];
  }

  count(filter: F): Promise<number> {
    return countMatching(this.options.collection, this.options.query(filter), this.options.reads);
  }

  async create(doc: Doc): Promise<Doc> {
    await insertNew(this.options.collection, doc as OptionalUnlessRequiredId<Doc>, this.options.what);
    await this.options.afterWrite();
    return doc;
  }

  async update(key: TaggedKey, patch: Partial<Doc>): Promise<Doc> {
    const { collection, what, tagField } = this.options;
    const current = await this.find(key);
    if (!current) throw notFound(what);
    if (Object.keys(patch).length === 0) return current;
    const currentTag = current[tagField] as string;
    if (patch[tagField] !== undefined && patch[tagField] !== currentTag) {
      await this.options.refuseInUse(currentTag, 'rename');
    }
    let updated: Doc | null;
    try {
      // Filtered on the tag read above: a concurrent rename makes this miss rather than slip past
      // the reference check.
      updated = (await collection.findOneAndUpdate(
        { _id: current._id, [tagField]: currentTag } as Filter<Doc>,
        { $set: patch } as UpdateFilter<Doc>,
        { returnDocument: 'after' },
      )) as Doc | null;
    } catch (err) {
      rethrowDuplicate(err, what);
    }
    if (!updated) throw notFound(what);
    await this.options.afterWrite();
    return updated;
  }

  async delete(key: TaggedKey): Promise<Doc> {
    const { collection, what, tagField } = this.options;
    const current = await this.find(key);
    if (!current) throw notFound(what);
    await this.options.refuseInUse(current[tagField] as string, 'delete');
    const deleted = (await collection.findOneAndDelete({ _id: current._id } as Filter<Doc>)) as Doc | null;
    if (!deleted) throw notFound(what);
    await this.options.afterWrite();
    return deleted;
  }
}
