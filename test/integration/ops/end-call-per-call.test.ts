import type { AlertJob } from '../../../src/shared/domain/queues/payloads';
import { scanExhaustedCalls } from '../../../src/workers/maintenance/scan-calls';
import { createTestContext, TestContext } from '../../support/harness';
import { account, runningEntry } from '../../support/seed';

/**
 * END_CALL is said once per call (docs/OPERATIONS.md), and a call is one running entry, not a tag: a tag
 * rolled back and used again is a new call, and two customers of one reseller may use the same tag.
 * And a call that costs nothing is never told to end. Run against real Redis and MongoDB, the scan
 * called directly; the alert jobs it queues are read from the alerts queue.
 */
describe('END_CALL once per call, and only for calls that cost something', () => {
  let ctx: TestContext;
  const endCalls = async () => {
    const jobs = await ctx.queues.alerts.getJobs(['waiting', 'delayed', 'prioritized']);
    return jobs
      .map((j) => j.data as AlertJob)
      .filter((a) => a.kind === 'END_CALL')
      .map((a) => [a.account_tag, a.transaction_tag, (a.details as Record<string, unknown>).caller_account_tag]);
  };
  const free = { pricelist_tag: 'pl', carrier_tag: 'c1', prefix: '112', connect_fee: 0, rate: 0, rate_increment: 1, interval_start: 0 };
  const began = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000);

  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => {
    await ctx?.destroy();
  });

  it('a free call on an account with nothing left is not told to end; a priced one is, and a new call with its tag again', async () => {
    const { accounts } = ctx.mongo.collections;
    await accounts.insertOne(
      account('caller', {
        balance: 0n,
        running_transactions: [
          runningEntry('emergency', { rate: free, timestamp_begin: began(30) }),
          runningEntry('t', { id: 'first-call', timestamp_begin: began(60) }),
        ],
      }),
    );
    await scanExhaustedCalls(ctx);
    expect(await endCalls()).toEqual([['caller', 't', 'caller']]);
    // The call ends; its tag is used again by a new call (a rollback, then the same Call-ID), which runs out too.
    await accounts.updateOne(
      { account_tag: 'caller' },
      { $set: { running_transactions: [runningEntry('t', { id: 'second-call', timestamp_begin: began(60) })] } },
    );
    await scanExhaustedCalls(ctx);
    expect(await endCalls()).toEqual([
      ['caller', 't', 'caller'],
      ['caller', 't', 'caller'],
    ]);
    // Scanned again, neither call is said twice.
    await scanExhaustedCalls(ctx);
    expect(await endCalls()).toHaveLength(2);
  });

  it("a reseller's shares of two customers' calls with one tag are two calls, each named by its caller", async () => {
    await ctx.mongo.collections.accounts.insertOne(
      account('reseller', {
        balance: 0n,
        running_transactions: [
          runningEntry('42', { id: 'share-a', origin_account_tag: 'customer-a', timestamp_begin: began(60) }),
          runningEntry('42', { id: 'share-b', origin_account_tag: 'customer-b', timestamp_begin: began(60) }),
        ],
      }),
    );
    await scanExhaustedCalls(ctx);
    expect((await endCalls()).filter(([tag]) => tag === 'reseller').sort()).toEqual([
      ['reseller', '42', 'customer-a'],
      ['reseller', '42', 'customer-b'],
    ]);
  });
});
