import { MongoClient } from 'mongodb';
import { serverUrls, uniqueName } from '../support/harness';

/**
 * The engine relies on single-document atomicity (docs/DESIGN.md section 2). This proves the server under
 * test gives it: many independent clients racing on one document lose nothing and break no bound.
 */
describe('MongoDB-wire server single-document atomicity', () => {
  const dbName = uniqueName('atomicity');
  let clients: MongoClient[] = [];

  beforeAll(async () => {
    clients = await Promise.all(
      Array.from({ length: 50 }, async () => new MongoClient(serverUrls().mongoUrl, { maxPoolSize: 2 }).connect()),
    );
  });

  afterAll(async () => {
    await clients[0]?.db(dbName).dropDatabase();
    await Promise.all(clients.map((c) => c.close()));
  });

  it('50 clients doing concurrent $inc on one document lose no increment', async () => {
    const collection = (c: MongoClient) => c.db(dbName).collection<{ _id: string; n: number }>('counters');
    await collection(clients[0]).insertOne({ _id: 'c', n: 0 });
    await Promise.all(
      clients.map(async (client) => {
        for (let i = 0; i < 20; i++) await collection(client).updateOne({ _id: 'c' }, { $inc: { n: 1 } });
      }),
    );
    expect((await collection(clients[0]).findOne({ _id: 'c' }))?.n).toBe(50 * 20);
  });

  it('30 concurrent conditional $push updates bounded by a limit never exceed it', async () => {
    const limit = 10;
    const collection = (c: MongoClient) => c.db(dbName).collection<{ _id: string; items: number[] }>('bounded');
    await collection(clients[0]).insertOne({ _id: 'b', items: [] });
    const results = await Promise.all(
      clients
        .slice(0, 30)
        .map((client, i) =>
          collection(client).updateOne({ _id: 'b', [`items.${limit - 1}`]: { $exists: false } }, { $push: { items: i } }),
        ),
    );
    const applied = results.filter((r) => r.modifiedCount === 1).length;
    const doc = await collection(clients[0]).findOne({ _id: 'b' });
    expect(applied).toBe(limit);
    expect(doc?.items).toHaveLength(limit);
  });

  it('concurrent findOneAndUpdate with a guard hands each unit to exactly one client', async () => {
    const collection = (c: MongoClient) => c.db(dbName).collection<{ _id: string; stock: number }>('stock');
    await collection(clients[0]).insertOne({ _id: 's', stock: 25 });
    const taken = await Promise.all(
      clients.map((client) =>
        collection(client).findOneAndUpdate({ _id: 's', stock: { $gt: 0 } }, { $inc: { stock: -1 } }, { returnDocument: 'after' }),
      ),
    );
    expect(taken.filter((doc) => doc !== null)).toHaveLength(25);
    expect((await collection(clients[0]).findOne({ _id: 's' }))?.stock).toBe(0);
  });
});
