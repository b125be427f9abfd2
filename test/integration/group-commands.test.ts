import { Collection, CommandStartedEvent, MongoClient } from 'mongodb';
import {
  flushWaitingWrites,
  groupFindElement,
  groupFindOne,
  groupInsert,
  groupInsertUnlessExists,
  groupUpdate,
  withGroupWindow,
} from '../../src/shared/infra/group-commands';
import { serverUrls, uniqueName } from '../support/harness';

interface Doc {
  _id: string;
  tag: string;
  n: number;
  label?: string;
  items?: Array<{ id: string; v: number }>;
}

/**
 * Group commit (src/shared/infra/group-commands.ts): concurrent commands on one collection travel together,
 * and every caller still gets its own document's outcome.
 */
describe('group commands', () => {
  const dbName = uniqueName('group');
  let client: MongoClient;
  let docs: Collection<Doc>;
  const sent: string[] = [];

  beforeAll(async () => {
    client = await new MongoClient(serverUrls().mongoUrl, { monitorCommands: true }).connect();
    client.on('commandStarted', (e: CommandStartedEvent) => sent.push(e.commandName));
    docs = client.db(dbName).collection<Doc>('docs');
    await docs.createIndex({ tag: 1 }, { unique: true });
  });

  afterAll(async () => {
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  beforeEach(async () => {
    await docs.deleteMany({});
    sent.length = 0;
  });

  const count = (name: string) => sent.filter((c) => c === name).length;

  it('inserts: one command for concurrent writes; duplicates (stored, or twice in one batch) reported to their own caller', async () => {
    await docs.insertOne({ _id: 'old', tag: 'old', n: 0 });
    sent.length = 0;
    const outcomes = await Promise.all([
      groupInsert(docs, { _id: 'a', tag: 'a', n: 1 }),
      groupInsert(docs, { _id: 'old', tag: 'x', n: 2 }),
      groupInsert(docs, { _id: 'b', tag: 'b', n: 3 }),
      groupInsert(docs, { _id: 'c', tag: 'a', n: 4 }),
      groupInsert(docs, { _id: 'd', tag: 'd', n: 5 }),
    ]);
    expect(outcomes).toEqual(['inserted', 'duplicate', 'inserted', 'duplicate', 'inserted']);
    expect(count('insert')).toBe(1);
    expect((await docs.find({}).sort({ _id: 1 }).toArray()).map((d) => d._id)).toEqual(['a', 'b', 'd', 'old']);
  });

  it('inserts arriving while a command is in flight leave together with the next one', async () => {
    const first = groupInsert(docs, { _id: 'first', tag: 'first', n: 0 });
    // Queued after the first command has left (it leaves at the next turn of the event loop).
    await new Promise((resolve) => setImmediate(resolve));
    const rest = Array.from({ length: 20 }, (_, i) => groupInsert(docs, { _id: `r${i}`, tag: `r${i}`, n: i }));
    expect(await Promise.all([first, ...rest])).toEqual(Array(21).fill('inserted'));
    expect(count('insert')).toBeLessThanOrEqual(2);
    expect(await docs.countDocuments()).toBe(21);
  });

  it('updates: one command, each applied on its own document; a refused one fails only its caller', async () => {
    await docs.insertMany([
      { _id: 'a', tag: 'a', n: 1 },
      { _id: 'b', tag: 'b', n: 2, label: 'text' },
      { _id: 'c', tag: 'c', n: 3 },
    ]);
    sent.length = 0;
    const results = await Promise.allSettled([
      groupUpdate(docs, { _id: 'a' }, { $inc: { n: 10 } }),
      // $inc on a string: refused by the server for this document only.
      groupUpdate(docs, { _id: 'b' }, { $inc: { label: 1 } as never }),
      groupUpdate(docs, { _id: 'c', n: 99 }, { $inc: { n: 10 } }),
      groupUpdate(docs, { _id: 'c' }, { $set: { label: 'set' } }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(count('update')).toBe(1);
    const after = await docs.find({}).sort({ _id: 1 }).toArray();
    expect(after.map((d) => [d._id, d.n, d.label ?? null])).toEqual([
      ['a', 11, null],
      ['b', 2, 'text'],
      // The filter still decides: n was not 99.
      ['c', 3, 'set'],
    ]);
  });

  it('inserts unless the _id exists, as update statements: inserted, exists (nothing changed) or duplicate, in one command with other updates', async () => {
    await docs.insertMany([
      { _id: 'old', tag: 'old', n: 0 },
      { _id: 'u', tag: 'u', n: 1 },
    ]);
    sent.length = 0;
    const [fresh, same, taken, updated] = await Promise.all([
      groupInsertUnlessExists(docs, { _id: 'new', tag: 'new', n: 5 }, ['tag']),
      groupInsertUnlessExists(docs, { _id: 'old', tag: 'old', n: 7 }, []),
      groupInsertUnlessExists(docs, { _id: 'other', tag: 'old', n: 9 }, []),
      groupUpdate(docs, { _id: 'u' }, { $inc: { n: 1 } }),
    ]);
    expect([fresh, same, taken, updated]).toEqual(['inserted', 'exists', 'duplicate', undefined]);
    expect(count('update')).toBe(1);
    expect(count('insert')).toBe(0);
    const after = await docs.find({}).sort({ _id: 1 }).toArray();
    expect(after.map((d) => [d._id, d.tag, d.n])).toEqual([
      ['new', 'new', 5],
      ['old', 'old', 0],
      ['u', 'u', 2],
    ]);
  });

  it('an update that may wait leaves with the next update that may not, or alone once its wait is over', async () => {
    await docs.insertMany([
      { _id: 'a', tag: 'a', n: 1 },
      { _id: 'b', tag: 'b', n: 2 },
    ]);
    sent.length = 0;
    let waited = false;
    const lazy = groupUpdate(docs, { _id: 'a' }, { $inc: { n: 1 } }, 60_000).then(() => (waited = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(waited).toBe(false);
    expect(count('update')).toBe(0);
    await groupUpdate(docs, { _id: 'b' }, { $inc: { n: 1 } });
    await lazy;
    expect(count('update')).toBe(1);
    expect((await docs.find({}).sort({ _id: 1 }).toArray()).map((d) => d.n)).toEqual([2, 3]);

    sent.length = 0;
    const alone = groupUpdate(docs, { _id: 'a' }, { $inc: { n: 1 } }, 100);
    // A timer armed after the update's own, expiring first: the update is still waiting then.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(count('update')).toBe(0);
    await alone;
    expect(count('update')).toBe(1);
  });

  it('a write waits no longer than its own wait, whatever an earlier write of its batcher may wait', async () => {
    const windowed = withGroupWindow(client.db(dbName), { docs }, 20).docs;
    await docs.insertOne({ _id: 'a', tag: 'a', n: 1 });
    sent.length = 0;
    // The mark may wait a minute; the insert after it on the same handle only its 20 ms window, and takes the mark along.
    const lazy = groupUpdate(windowed, { _id: 'a' }, { $inc: { n: 1 } }, 60_000);
    expect(await groupInsertUnlessExists(windowed, { _id: 'b', tag: 'b', n: 2 }, ['tag'])).toBe('inserted');
    await lazy;
    expect(count('update')).toBe(1);
    expect((await docs.find({}).sort({ _id: 1 }).toArray()).map((d) => d.n)).toEqual([2, 2]);
  });

  it('a closing client first sends the updates still waiting for company', async () => {
    await docs.insertOne({ _id: 'a', tag: 'a', n: 1 });
    sent.length = 0;
    const waiting = groupUpdate(docs, { _id: 'a' }, { $inc: { n: 1 } }, 60_000);
    await flushWaitingWrites();
    expect(count('update')).toBe(1);
    await waiting;
    expect((await docs.findOne({ _id: 'a' }))?.n).toBe(2);
  });

  it('reads by a unique key: one $in query; a missing key is null; the same key twice gives two copies', async () => {
    await docs.insertMany([
      { _id: 'a', tag: 'ta', n: 1 },
      { _id: 'b', tag: 'tb', n: 2 },
    ]);
    sent.length = 0;
    const [a, missing, b, a2] = await Promise.all([
      groupFindOne(docs, 'tag', 'ta'),
      groupFindOne(docs, 'tag', 'nope'),
      groupFindOne(docs, 'tag', 'tb'),
      groupFindOne(docs, 'tag', 'ta'),
    ]);
    expect(count('find')).toBe(1);
    expect(a).toEqual({ _id: 'a', tag: 'ta', n: 1 });
    expect(missing).toBeNull();
    expect(b).toEqual({ _id: 'b', tag: 'tb', n: 2 });
    expect(a2).toEqual(a);
    expect(a2).not.toBe(a);
  });

  it('reads one element of a document: only that element comes back; two of one document take a round each', async () => {
    const items = (prefix: string) => Array.from({ length: 30 }, (_, i) => ({ id: `${prefix}${i}`, v: i }));
    await docs.insertMany([
      { _id: 'a', tag: 'ta', n: 1, items: items('a') },
      { _id: 'b', tag: 'tb', n: 2, items: items('b') },
    ]);
    sent.length = 0;
    const read = (tag: string, id: string) => groupFindElement<Doc, { id: string; v: number }>(docs, 'tag', tag, 'items', 'id', id);
    const [a7, b3, a20, missingDoc, missingItem, a7again] = await Promise.all([
      read('ta', 'a7'),
      read('tb', 'b3'),
      read('ta', 'a20'),
      read('nope', 'x1'),
      read('tb', 'b99'),
      read('ta', 'a7'),
    ]);
    // a7 and a20 of one document: two rounds; no document came back whole.
    expect(count('find')).toBe(2);
    expect(a7).toEqual({ doc: { _id: 'a', tag: 'ta', items: [{ id: 'a7', v: 7 }] }, element: { id: 'a7', v: 7 } });
    expect(b3?.element).toEqual({ id: 'b3', v: 3 });
    expect(a20?.element).toEqual({ id: 'a20', v: 20 });
    expect(missingDoc).toBeNull();
    expect(missingItem).toMatchObject({ doc: { tag: 'tb' }, element: undefined });
    expect(a7again?.element).toEqual(a7?.element);
    expect(a7again?.element).not.toBe(a7?.element);
    // An id of another document is not an element of this one, even when that document is read beside it.
    const [ofOther, a5] = await Promise.all([read('tb', 'a3'), read('ta', 'a5')]);
    expect(ofOther).toMatchObject({ doc: { tag: 'tb' }, element: undefined });
    expect(a5?.element).toEqual({ id: 'a5', v: 5 });
  });

  it('a command that fails as a whole (server unreachable) fails every caller in it, inserts and updates alike', async () => {
    // Nothing listens there: the driver reports the failure wrapped as a bulk error without per-item refusals.
    const unreachable = new MongoClient('mongodb://127.0.0.1:1', { serverSelectionTimeoutMS: 300 });
    const gone = unreachable.db(dbName).collection<Doc>('docs');
    const results = await Promise.allSettled([
      groupInsert(gone, { _id: 'x', tag: 'x', n: 0 }),
      groupInsert(gone, { _id: 'y', tag: 'y', n: 0 }),
      groupUpdate(gone, { _id: 'x' }, { $set: { n: 1 } }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    await unreachable.close();
  });
});
