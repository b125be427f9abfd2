import { Collection, MongoClient } from 'mongodb';
import { serverUrls, uniqueName } from '../support/harness';

interface Doc {
  _id: string;
  tag: string;
  rev: number;
  items: Array<{ id: string; open: boolean }>;
  note?: string | null;
}

/**
 * Queries that name a unique key plus other conditions (the service's guarded updates) are answered
 * through the key, then the whole query is applied (tools/mongo-server KeyLookupIndex, issue 12). The
 * answers must be exactly what a scan gives: the condition still decides, on `_id` and on a secondary
 * unique index, for find, update, findAndModify and delete.
 */
describe('MongoDB-wire server: a unique key plus conditions', () => {
  const dbName = uniqueName('keylookup');
  let client: MongoClient;
  let docs: Collection<Doc>;

  beforeAll(async () => {
    client = await new MongoClient(serverUrls().mongoUrl).connect();
    docs = client.db(dbName).collection<Doc>('docs');
    await docs.createIndex({ tag: 1 }, { unique: true });
    await docs.insertMany([
      { _id: 'a', tag: 'ta', rev: 1, items: [{ id: 'x', open: true }], note: null },
      { _id: 'b', tag: 'tb', rev: 7, items: [], note: 'kept' },
    ]);
  });

  afterAll(async () => {
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  it('find: the key narrows, the other conditions still decide', async () => {
    expect(await docs.findOne({ tag: 'ta', rev: 1 })).toMatchObject({ _id: 'a' });
    expect(await docs.findOne({ tag: 'ta', rev: 2 })).toBeNull();
    expect(await docs.findOne({ _id: 'a', 'items.id': 'x' })).toMatchObject({ _id: 'a' });
    expect(await docs.findOne({ _id: 'a', 'items.id': 'y' })).toBeNull();
    expect(await docs.findOne({ _id: 'b', 'items.0': { $exists: false } })).toMatchObject({ _id: 'b' });
    expect(await docs.findOne({ _id: 'a', 'items.0': { $exists: false } })).toBeNull();
    expect(await docs.findOne({ tag: 'tb', note: 'kept', $or: [{ rev: 7 }, { rev: 8 }] })).toMatchObject({ _id: 'b' });
    expect(await docs.findOne({ tag: 'tb', $or: [{ rev: 1 }, { rev: 2 }] })).toBeNull();
    expect(await docs.findOne({ tag: 'ta', note: null })).toMatchObject({ _id: 'a' });
    expect(await docs.findOne({ tag: 'nobody', rev: 1 })).toBeNull();
    // Another operator on the key itself is not narrowed by it: still answered (by a scan).
    expect((await docs.find({ tag: { $gte: 'ta' }, rev: { $gt: 0 } }).toArray()).map((d) => d._id).sort()).toEqual(['a', 'b']);
  });

  it('find: an $in list on a single-key unique index narrows to those keys; the rest still decides', async () => {
    const ids = async (query: Record<string, unknown>) => (await docs.find(query).toArray()).map((d) => d._id).sort();
    expect(await ids({ tag: { $in: ['ta', 'tb'] }, rev: { $gt: 0 } })).toEqual(['a', 'b']);
    expect(await ids({ tag: { $in: ['ta', 'tb', 'nobody'] }, rev: 7 })).toEqual(['b']);
    // The shape of the service's batched checks that also name the shard key (docs/SCALING.md).
    expect(await ids({ _id: { $in: ['a', 'b', 'c'] }, tag: { $in: ['ta', 'tb'] } })).toEqual(['a', 'b']);
    expect(await ids({ _id: { $in: ['a', 'b'] }, tag: { $in: ['tb'] } })).toEqual(['b']);
    expect(await ids({ _id: { $in: ['a'] }, tag: { $in: ['tb'] } })).toEqual([]);
    expect(await ids({ _id: { $in: [] }, tag: 'ta' })).toEqual([]);
    // Lists the narrowing leaves alone (null matches a missing field; a regular expression; more operators).
    expect(await ids({ tag: { $in: [null, 'ta'] }, rev: { $gt: 0 } })).toEqual(['a']);
    expect(await ids({ tag: { $in: [/^t/] }, rev: { $gt: 0 } })).toEqual(['a', 'b']);
    expect(await ids({ tag: { $in: ['ta', 'tb'], $ne: 'ta' } })).toEqual(['b']);
  });

  it('update, findAndModify and delete apply only where the condition holds', async () => {
    expect((await docs.updateOne({ tag: 'ta', rev: 99 }, { $inc: { rev: 1 } })).modifiedCount).toBe(0);
    expect((await docs.updateOne({ tag: 'ta', rev: 1 }, { $inc: { rev: 1 } })).modifiedCount).toBe(1);
    expect(await docs.findOneAndUpdate({ _id: 'a', 'items.id': 'nope' }, { $set: { note: 'x' } })).toBeNull();
    expect(
      await docs.findOneAndUpdate(
        { _id: 'a', items: { $elemMatch: { id: 'x', open: true } } },
        { $pull: { items: { id: 'x' } } },
        { returnDocument: 'after' },
      ),
    ).toMatchObject({ _id: 'a', items: [] });
    expect((await docs.deleteOne({ _id: 'b', rev: 1 })).deletedCount).toBe(0);
    expect(await docs.findOne({ _id: 'a' })).toMatchObject({ rev: 2, items: [], note: null });
    expect((await docs.deleteOne({ _id: 'b', rev: 7 })).deletedCount).toBe(1);
    expect(await docs.countDocuments()).toBe(1);
  });
});
