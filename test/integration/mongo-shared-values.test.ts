import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { stopChild } from '../../src/shared/infra/services/redis-server';
import { serverUrls, uniqueName } from '../support/harness';
import { startH2MongoServer } from '../support/mongo-process';

/**
 * The in-memory server makes inserted documents share field names and repeated short string values
 * (tools/mongo-server SharedInsertStrings, issue 12). What is stored must be what came, and found again
 * by every index, on both backends: on H2 a shared value in an index key was never found again (its
 * keys compare by serialized bytes), which is why sharing is off there.
 */
describe.each(['memory', 'h2'] as const)('MongoDB-wire server (%s): stored documents are what came', (backend) => {
  let client: MongoClient;
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  const dbName = uniqueName('shared');

  beforeAll(async () => {
    let url = serverUrls().mongoUrl;
    if (backend === 'h2') {
      dir = mkdtempSync(path.join(os.tmpdir(), 'rating-shared-'));
      const started = await startH2MongoServer(path.join(dir, 'db.mv'));
      child = started.child;
      url = started.url;
    }
    client = await new MongoClient(url).connect();
  });

  afterAll(async () => {
    await client
      ?.db(dbName)
      .dropDatabase()
      .catch(() => undefined);
    await client?.close();
    if (child) await stopChild(child);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('equal values in a unique key are found by it, and documents come back field for field', async () => {
    const records = client.db(dbName).collection<{
      _id: string;
      account_tag: string;
      transaction_tag: string;
      origin_account_tag: string;
      parties: Array<{ account_tag: string; fee: number }>;
    }>('records');
    await records.createIndex({ account_tag: 1, transaction_tag: 1, origin_account_tag: 1 }, { unique: true });
    // The caller is its own origin, and its parties repeat its tag: the same value many times per document.
    const doc = (n: number) => ({
      _id: `r${n}`,
      account_tag: 'a1',
      transaction_tag: `t${n}`,
      origin_account_tag: 'a1',
      parties: [
        { account_tag: 'a1', fee: n },
        { account_tag: 'p1', fee: 0 },
      ],
    });
    await records.insertOne(doc(0));
    await records.insertMany([doc(1), doc(2)], { ordered: false });
    for (const n of [0, 1, 2]) {
      expect(await records.findOne({ account_tag: 'a1', transaction_tag: `t${n}`, origin_account_tag: 'a1' })).toEqual(doc(n));
      expect(Object.keys((await records.findOne({ _id: `r${n}` }))!)).toEqual(Object.keys(doc(n)));
    }
    await expect(records.insertOne({ ...doc(1), _id: 'again' })).rejects.toMatchObject({ code: 11000 });
  });
});
