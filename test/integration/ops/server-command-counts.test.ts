import { createTestContext, TestContext, uniqueName } from '../../support/harness';

/**
 * The embedded MongoDB-wire server counts the commands it receives, in all and by kind ("command
 * collection"), for the benchmark's commands per call under load (bench/agent/open-loop.ts,
 * docs/BENCHMARKS.md). The server is shared by the tests running beside this one, so only a collection
 * of this test's own is counted exactly.
 */
describe('the embedded server counts commands by kind', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestContext();
  });

  afterAll(async () => {
    await ctx?.destroy();
  });

  const status = async () => {
    const reply = await ctx.mongo.db.admin().command({ serverStatus: 1 });
    return { total: Number(reply.ratingCommands), byKind: (reply.ratingCommandsByKind ?? {}) as Record<string, number> };
  };

  it('each command of a collection under its own kind, and in the total', async () => {
    const name = uniqueName('counted');
    const collection = ctx.mongo.db.collection<{ _id: string; n: number }>(name);
    const before = await status();
    await collection.insertOne({ _id: 'a', n: 1 });
    await collection.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
    await collection.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
    expect(await collection.findOne({ _id: 'a' })).toEqual({ _id: 'a', n: 3 });
    const after = await status();
    expect(before.byKind[`insert ${name}`]).toBeUndefined();
    expect(Number(after.byKind[`insert ${name}`])).toBe(1);
    expect(Number(after.byKind[`update ${name}`])).toBe(2);
    expect(Number(after.byKind[`find ${name}`])).toBe(1);
    expect(after.total - before.total).toBeGreaterThanOrEqual(5);
  });
});
