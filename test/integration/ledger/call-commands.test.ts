import { commandTotal, countCallCommands, type CallCommands } from '../../support/call-commands';
import { createTestContext, serverUrls, TestContext } from '../../support/harness';

/**
 * Issue 36, counted (a count, not a timing, so it holds on any machine): the MongoDB commands a
 * single-party prepaid call costs, phase by phase, as the worker's functions send them. Each figure
 * is a ceiling: a change that adds a command to the hot path fails here and says which phase grew.
 * The goal, 6 for the whole call, is the ceiling (docs/BENCHMARKS.md, "MongoDB commands per
 * call": what each command is, and how the count came down from 14).
 */
describe('MongoDB commands per single-party prepaid call', () => {
  let ctx: TestContext;
  let counts: CallCommands;

  beforeAll(async () => {
    ctx = await createTestContext();
    counts = await countCallCommands(ctx, serverUrls().mongoUrl, { parents: 0, limited: false });
  });

  afterAll(async () => {
    await ctx?.destroy();
  });

  const ceilings = { authorization: 1, begin: 2, end: 2, processing: 1 } as const;

  it.each(Object.entries(ceilings))('%s sends at most %i', (phase, ceiling) => {
    const sent = counts[phase as keyof CallCommands];
    expect(commandTotal(sent)).toBeLessThanOrEqual(ceiling);
  });

  it('the end charges in its own write: what follows its answer neither reads nor writes the account', () => {
    expect(counts.end.get('findAndModify accounts')).toBe(1);
    expect(counts.processing.get('find accounts') ?? 0).toBe(0);
    expect(counts.processing.get('findAndModify accounts') ?? 0).toBe(0);
  });

  it("the end's record write carries the previous call's charged mark: one update command for both", () => {
    expect(counts.end.get('update transactions')).toBe(1);
    expect(counts.end.get('insert transactions') ?? 0).toBe(0);
    expect(counts.processing.get('update transactions') ?? 0).toBe(0);
  });

  it("end reads no decision: its process remembers the begin's", () => {
    expect(counts.end.get('find agent_outcomes') ?? 0).toBe(0);
  });

  it('the whole call: 6 commands at most', () => {
    const total = Object.values(counts).reduce((sum, byCommand) => sum + commandTotal(byCommand), 0);
    expect(total).toBeLessThanOrEqual(6);
  });

  describe('ended in another worker process than the one that began it (a deployment with several)', () => {
    let elsewhere: CallCommands;
    beforeAll(async () => {
      await ctx.mongo.db.dropDatabase();
      elsewhere = await countCallCommands(ctx, serverUrls().mongoUrl, { parents: 0, limited: false, endElsewhere: true });
    });

    // That process knows nothing of the call: its end reads the call's entry and charges in its own
    // write, as the process that began it would (end-charge.ts; docs/BENCHMARKS.md, "MongoDB commands per call").
    it("the end reads the call's entry, then charges in its own write: 7 in all", () => {
      expect(elsewhere.end.get('find accounts')).toBe(1);
      expect(elsewhere.end.get('findAndModify accounts')).toBe(1);
      expect(commandTotal(elsewhere.end)).toBeLessThanOrEqual(3);
      expect(commandTotal(elsewhere.processing)).toBeLessThanOrEqual(1);
      const total = Object.values(elsewhere).reduce((sum, byCommand) => sum + commandTotal(byCommand), 0);
      expect(total).toBeLessThanOrEqual(7);
      expect(elsewhere.end.get('find agent_outcomes') ?? 0).toBe(0);
    });
  });

  describe('a call with one linked parent', () => {
    let withParent: CallCommands;
    beforeAll(async () => {
      await ctx.mongo.db.dropDatabase();
      withParent = await countCallCommands(ctx, serverUrls().mongoUrl, { parents: 1, limited: false });
    });

    // The parties' charges run side by side (processor.ts, chargeEnded), so their records travel in one
    // insert; each party's balance is its own findAndModify (20 commands in all when they ran one after
    // the other).
    it('processing inserts both records in one command: 7 commands at most, 19 for the call', () => {
      expect(withParent.processing.get('insert transactions')).toBe(1);
      expect(withParent.processing.get('findAndModify accounts')).toBe(2);
      expect(commandTotal(withParent.processing)).toBeLessThanOrEqual(7);
      const total = Object.values(withParent).reduce((sum, byCommand) => sum + commandTotal(byCommand), 0);
      expect(total).toBeLessThanOrEqual(19);
    });
  });
});
