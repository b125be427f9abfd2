import { resolveParties } from '../../../src/workers/transactions/parties';
import { createTestContext, TestContext } from '../../support/harness';
import { account } from '../../support/seed';

/**
 * The parties of a call (caller, linked accounts transitively, inbound receiver), in the order every
 * operation decides them: a refusal names the first party in that order that refuses, whatever order
 * the reads come back in (issue 12 reads a level of linked accounts, and the receiver, at once).
 */
describe('resolveParties', () => {
  let ctx: TestContext;

  beforeEach(async () => {
    ctx = await createTestContext();
  });
  afterEach(async () => {
    await ctx.destroy();
  });

  const seedAccounts = (...docs: ReturnType<typeof account>[]) => ctx.mongo.collections.accounts.insertMany(docs);
  const resolve = (caller: string, destination: string | null = null) =>
    resolveParties(ctx.mongo.collections.accounts, caller, destination);

  it('lists the caller, its linked accounts level by level in their order, then the receiver', async () => {
    await seedAccounts(
      account('caller', { linked_accounts: ['p1', 'p2'] }),
      account('p1', { linked_accounts: ['g1', 'caller'] }),
      account('p2', { linked_accounts: ['g2', 'g1'] }),
      account('g1'),
      account('g2'),
      account('receiver'),
    );
    const resolved = await resolve('caller', 'receiver');
    expect(resolved).toEqual({
      parties: ['caller', 'p1', 'p2', 'g1', 'g2']
        .map((tag) => ({ account: expect.objectContaining({ account_tag: tag }), inbound: false }))
        .concat([{ account: expect.objectContaining({ account_tag: 'receiver' }), inbound: true }]),
    });
  });

  it('does not add a receiver that is already a party of the chain as inbound', async () => {
    await seedAccounts(account('caller', { linked_accounts: ['p1'] }), account('p1'));
    const resolved = await resolve('caller', 'p1');
    expect('parties' in resolved && resolved.parties.map((p) => [p.account.account_tag, p.inbound])).toEqual([
      ['caller', false],
      ['p1', false],
    ]);
  });

  it('names the first refusing party in order, not the first read to come back', async () => {
    await seedAccounts(
      account('caller', { linked_accounts: ['p1', 'missing-parent'] }),
      account('p1', { active: false, linked_accounts: ['also-missing'] }),
      account('receiver', { active: false }),
    );
    expect(await resolve('caller', 'receiver')).toEqual({ refusal: { reason: 'NOT_ACTIVE', account_tag: 'p1' } });
  });

  it('refuses for a missing parent before a missing receiver, and for the receiver when the chain is whole', async () => {
    await seedAccounts(account('caller', { linked_accounts: ['p1'] }), account('p1', { linked_accounts: ['gone'] }));
    expect(await resolve('caller', 'nobody')).toEqual({ refusal: { reason: 'NOT_FOUND', account_tag: 'gone' } });
    await ctx.mongo.collections.accounts.updateOne({ account_tag: 'p1' }, { $set: { linked_accounts: [] } });
    expect(await resolve('caller', 'nobody')).toEqual({ refusal: { reason: 'NOT_FOUND', account_tag: 'nobody' } });
  });

  it('refuses an unknown or inactive caller by its own tag', async () => {
    await seedAccounts(account('sleeping', { active: false }), account('receiver'));
    expect(await resolve('unknown', 'receiver')).toEqual({ refusal: { reason: 'NOT_FOUND', account_tag: 'unknown' } });
    expect(await resolve('sleeping', 'receiver')).toEqual({ refusal: { reason: 'NOT_ACTIVE', account_tag: 'sleeping' } });
  });
});
