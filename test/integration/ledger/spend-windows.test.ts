import { spentInWindows } from '../../../src/shared/domain/ledger/spend';
import type { LedgerEntryDoc } from '../../../src/shared/domain/ledger/model';
import { createTestContext, TestContext } from '../../support/harness';

/**
 * What a rolling hour and day count as spent (docs/AGENT.md, "Spend limits"), from ledger entries written
 * here: a credit gives room back in the windows that counted the debits it reverses, the record's charge
 * and any rerating that raised its fee, newest first, never more than they counted.
 */
describe('spending in the rolling windows', () => {
  let ctx: TestContext;
  const now = new Date('2026-11-28T12:00:00Z');
  const ago = (hours: number) => new Date(now.getTime() - hours * 3_600_000);
  let n = 0;
  const entry = (account: string, kind: LedgerEntryDoc['kind'], amount: bigint, ref: string, at: Date): LedgerEntryDoc => ({
    _id: `e${++n}`,
    account_tag: account,
    amount,
    kind,
    transaction_tag: null,
    ref,
    at,
  });
  const spent = (account: string) => spentInWindows(ctx.mongo.collections, { account_tag: account }, now);

  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => {
    await ctx?.destroy();
  });

  it("a rerating that raised yesterday's call today and one that lowered it back an hour later leave nothing counted", async () => {
    await ctx.mongo.collections.ledger.insertMany([
      entry('a', 'charge', -100n, 'x', ago(27)),
      entry('a', 'rerate', -300n, 'x', ago(2)),
      entry('a', 'rerate', 300n, 'x', ago(1)),
    ]);
    expect(await spent('a')).toEqual({ hour: 0n, day: 0n });
  });

  it('a refund after a raise gives back the raise in its window; the part reversing an old charge counts nothing', async () => {
    await ctx.mongo.collections.ledger.insertMany([
      entry('b', 'charge', -100n, 'y', ago(27)),
      entry('b', 'rerate', -300n, 'y', ago(3)),
      entry('b', 'refund', 400n, 'y', ago(0.5)),
      // Today's own call, charged and kept: 50 in the day, in the hour too.
      entry('b', 'charge', -50n, 'z', ago(0.2)),
    ]);
    expect(await spent('b')).toEqual({ hour: 50n, day: 50n });
  });

  it("a credit never gives back more than its record's debits counted: yesterday's refunded call leaves today's room as it was", async () => {
    await ctx.mongo.collections.ledger.insertMany([
      entry('c', 'charge', -100n, 'old', ago(30)),
      entry('c', 'refund', 100n, 'old', ago(1)),
      entry('c', 'charge', -70n, 'today', ago(5)),
      entry('c', 'rerate', 20n, 'today', ago(0.5)),
    ]);
    // Today's call: 70 charged 5 h ago, lowered by 20 half an hour ago: 50 in the day, nothing in the hour.
    expect(await spent('c')).toEqual({ hour: 0n, day: 50n });
  });

  it('a credit reverses only debits applied before it: a rerating that lowered a fee, then one that raised it, leaves the raise counted', async () => {
    await ctx.mongo.collections.ledger.insertMany([
      entry('d', 'charge', -100n, 'w', ago(26)),
      entry('d', 'rerate', 30n, 'w', ago(2.25)),
      entry('d', 'rerate', -50n, 'w', ago(2)),
    ]);
    // Today: the lowering reverses yesterday's charge (out of the windows), the raise 2 h ago counts 50.
    expect(await spent('d')).toEqual({ hour: 0n, day: 50n });
    await ctx.mongo.collections.ledger.insertMany([
      entry('e', 'charge', -100n, 'v', ago(0.9)),
      entry('e', 'rerate', 30n, 'v', ago(0.6)),
      entry('e', 'rerate', -50n, 'v', ago(0.5)),
    ]);
    expect(await spent('e')).toEqual({ hour: 120n, day: 120n });
  });
});
