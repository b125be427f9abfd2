import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../../src/api/app';
import { DashboardStore } from '../../../../src/api/store/dashboard';
import type { AccountDoc, TransactionDoc } from '../../../../src/shared/domain/types';
import { AgentHarness, startAgentHarness, waitFor } from '../../../support/agent-harness';
import { graphql } from '../../../support/harness';
import { account, perSecondRating, runningEntry, seed } from '../../../support/seed';
import { ApiHarness, startApi } from '../api-harness';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const DASHBOARD = `{ dashboard {
  calls_per_minute { start calls revenue }
  revenue_per_hour { start calls revenue }
  running_calls
  accounts_below_threshold { account_tag balance }
  accounts_below_threshold_count
  queues { name waiting active delayed failed }
  workers
  generated_at
} }`;

/** A record of a call that ended at `end`, held by `holder`, made by `caller` (its own record when they are the same). */
function record(tag: string, holder: string, end: Date, fee: bigint, caller = holder, extra: Partial<TransactionDoc> = {}): TransactionDoc {
  return {
    _id: randomUUID(),
    transaction_tag: tag,
    account_tag: holder,
    origin_account_tag: caller,
    source: '100',
    source_ip: null,
    destination: '3906',
    carrier_ip: null,
    tags: null,
    authorized: true,
    unauthorized_reason: null,
    destination_rate: null,
    timestamp_auth: null,
    timestamp_begin: new Date(end.getTime() - 10_000),
    timestamp_end: end,
    inbound: false,
    failed: false,
    duration: 10,
    fee,
    state: 'charged',
    ...extra,
  };
}

describe('API dashboard', () => {
  describe('figures, from data written to the store', () => {
    let api: ApiHarness;
    const c = () => api.ctx.mongo.collections;
    // 12:30:30 on a fixed day: the minute bucket of "now" starts at 12:30, the hour bucket at 12:00.
    const NOW = Date.UTC(2026, 10, 23, 12, 30, 30);
    const at = (msBefore: number) => new Date(NOW - msBefore);
    const store = (now = NOW) => new DashboardStore(c(), api.ctx.queues, api.ctx.config, { maxTimeMS: 10_000 }, () => now);

    beforeAll(async () => {
      api = await startApi({ LOW_BALANCE_THRESHOLD: '100' });
      const accounts: AccountDoc[] = [
        account('a-neg', { balance: -5n }),
        account('a-low', { balance: 50n }),
        account('a-ok', { balance: 150n }),
        account('a-exact', { balance: 100n }),
        account('t-own-high', { balance: 500n, balance_alert_threshold: 1000n }),
        account('t-own-zero', { balance: 20n, balance_alert_threshold: 0n }),
        account('t-own-neg', { balance: -1n, balance_alert_threshold: -500n }),
        account('t-own-low', { balance: 5n, balance_alert_threshold: 10n }),
        account('t-own-ok', { balance: 10n, balance_alert_threshold: 10n }),
        account('post', { balance: -100n, type: 'POSTPAID' }),
        account('post-ok', { balance: 1000n, type: 'POSTPAID', balance_alert_threshold: null }),
        // Running entries: a call of r1 (its own entry and its parent's), an ended call awaiting
        // processing on r3, and a reservation on r2 (not a call).
        account('r1', {
          balance: 1000n,
          linked_accounts: ['r-parent'],
          running_transactions: [runningEntry('call-1', { origin_account_tag: 'r1' })],
        }),
        account('r-parent', {
          balance: 1000n,
          running_transactions: [runningEntry('call-1', { id: 'entry-parent', origin_account_tag: 'r1' })],
        }),
        account('r2', {
          balance: 1000n,
          running_transactions: [
            runningEntry('held', { origin_account_tag: 'r2', rate: null, reserved_until: new Date(Date.now() + 60_000) }),
          ],
        }),
        account('r3', {
          balance: 1000n,
          running_transactions: [runningEntry('ended', { origin_account_tag: 'r3', in_progress: false, timestamp_end: new Date() })],
        }),
      ];
      await seed(api.ctx, { accounts });
      await c().transactions.insertMany([
        // The current minute: a call of alice (fee 7) with its parent's share (fee 5) and an inbound
        // receiver's record (fee 0): one call, revenue 7.
        record('m0', 'alice', at(10_000), 7n),
        record('m0', 'parent', at(10_000), 5n, 'alice'),
        record('m0', 'bob', at(10_000), 0n, 'alice', { inbound: true }),
        // Two minutes ago (12:28): two calls, one of them an older record without origin_account_tag.
        record('m2a', 'alice', at(2 * MINUTE + 15_000), 3n),
        { ...record('m2b', 'carol', at(2 * MINUTE + 20_000), 4n), origin_account_tag: undefined },
        // 59 minutes ago (11:31): the oldest minute bucket is 11:31.
        record('m59', 'alice', at(59 * MINUTE + 20_000), 11n),
        // 61 minutes ago: outside the minutes, inside the 11:00 hour.
        record('h1', 'alice', at(61 * MINUTE), 13n),
        // 23 hours ago (13:30 yesterday): the oldest hour bucket is 13:00.
        record('h23', 'alice', at(23 * HOUR), 17n),
        // 25 hours ago: outside everything.
        record('h25', 'alice', at(25 * HOUR), 1000n),
        // A record ended in the future (clock skew) is in no bucket.
        record('future', 'alice', at(-2 * HOUR), 1000n),
        // Written raw through the API (no state: nobody was charged), and one being refunded: no revenue, no call.
        { ...record('raw', 'alice', at(10_000), 1000n), state: undefined },
        record('refunding', 'alice', at(10_000), 1000n, 'alice', { state: 'rolling_back' }),
      ]);
    });

    afterAll(async () => {
      await api.close();
    });

    it('calls_per_minute: 60 buckets by minute, oldest first, the last one the current minute; each call once, its caller fee', async () => {
      const minutes = await store().traffic(NOW, MINUTE, 60);
      expect(minutes).toHaveLength(60);
      expect(minutes[0].start).toEqual(new Date(Date.UTC(2026, 10, 23, 11, 31)));
      expect(minutes[59].start).toEqual(new Date(Date.UTC(2026, 10, 23, 12, 30)));
      for (let i = 1; i < 60; i++) expect(minutes[i].start.getTime() - minutes[i - 1].start.getTime()).toBe(MINUTE);
      const nonEmpty = minutes
        .filter((b) => b.calls > 0 || b.revenue !== 0n)
        .map((b) => [b.start.toISOString().slice(11, 16), b.calls, b.revenue]);
      expect(nonEmpty).toEqual([
        ['11:31', 1, 11n],
        ['12:28', 2, 7n],
        ['12:30', 1, 7n],
      ]);
    });

    it('revenue_per_hour: 24 buckets by hour, the last one the current hour', async () => {
      const hours = await store().traffic(NOW, HOUR, 24);
      expect(hours).toHaveLength(24);
      expect(hours[0].start).toEqual(new Date(Date.UTC(2026, 10, 22, 13)));
      expect(hours[23].start).toEqual(new Date(Date.UTC(2026, 10, 23, 12)));
      const nonEmpty = hours.filter((b) => b.calls > 0).map((b) => [b.start.toISOString().slice(11, 13), b.calls, b.revenue]);
      expect(nonEmpty).toEqual([
        ['13', 1, 17n],
        ['11', 2, 24n],
        ['12', 3, 14n],
      ]);
    });

    it('running_calls: each running call once (its caller entry), ended ones awaiting processing included, reservations not', async () => {
      expect(await store().runningCalls()).toBe(2);
    });

    it('accounts below their alert line: own threshold, else LOW_BALANCE_THRESHOLD; below zero always; lowest first', async () => {
      const below = await store().belowThreshold();
      expect(below.accounts.map((a) => [a.account_tag, a.balance])).toEqual([
        ['post', -100n],
        ['a-neg', -5n],
        ['t-own-neg', -1n],
        ['t-own-low', 5n],
        ['a-low', 50n],
        ['t-own-high', 500n],
      ]);
      expect(below.count).toBe(6);
    });

    it('queues: every queue with its counts; workers: none connected here', async () => {
      await api.ctx.queues.maintenance.add('scan-long-calls', { task: 'scan-long-calls' });
      await api.ctx.queues.alerts.add('later', { kind: 'LOW_BALANCE' } as never, { delay: HOUR });
      const queues = await store().queueDepths();
      expect(queues).toEqual([
        { name: 'transactions', waiting: 0, active: 0, delayed: 0, failed: 0 },
        { name: 'processing', waiting: 0, active: 0, delayed: 0, failed: 0 },
        { name: 'alerts', waiting: 0, active: 0, delayed: 1, failed: 0 },
        { name: 'maintenance', waiting: 1, active: 0, delayed: 0, failed: 0 },
        { name: 'imports', waiting: 0, active: 0, delayed: 0, failed: 0 },
      ]);
      expect(await store().workers()).toBe(0);
    });

    it('lists at most 50 accounts below their line, and counts them all', async () => {
      await c().accounts.insertMany(Array.from({ length: 50 }, (_, i) => account(`bulk-${i}`, { balance: BigInt(-1000 - i) })));
      const below = await store().belowThreshold();
      expect(below.accounts).toHaveLength(50);
      expect(below.count).toBe(56);
      expect(below.accounts[0].account_tag).toBe('bulk-49');
      await c().accounts.deleteMany({ account_tag: /^bulk-/ });
    });

    it('keeps one dashboard for 15 seconds per store (process), then computes a new one', async () => {
      let now = Date.now();
      const cached = new DashboardStore(c(), api.ctx.queues, api.ctx.config, { maxTimeMS: 10_000 }, () => now);
      const first = await cached.get();
      await c().transactions.insertOne(record('late', 'alice', new Date(now - 1000), 2n));
      now += 14_000;
      const second = await cached.get();
      expect(second).toBe(first);
      now += 2_000;
      const third = await cached.get();
      expect(third.generated_at.getTime()).toBe(now);
      const calls = (d: typeof first) => d.calls_per_minute.reduce((n, b) => n + b.calls, 0);
      expect(calls(third)).toBe(calls(first) + 1);
    });

    it('answers over GraphQL with the documented shape (read scope)', async () => {
      const { dashboard } = await api.ok(DASHBOARD);
      expect(dashboard.calls_per_minute).toHaveLength(60);
      expect(dashboard.revenue_per_hour).toHaveLength(24);
      expect(dashboard.calls_per_minute[0]).toEqual({ start: expect.any(String), calls: expect.any(Number), revenue: expect.any(Number) });
      expect(dashboard.running_calls).toBe(2);
      expect(dashboard.accounts_below_threshold_count).toBe(6);
      expect(dashboard.accounts_below_threshold[0]).toEqual({ account_tag: 'post', balance: -100 });
      expect(dashboard.queues.map((q: { name: string }) => q.name)).toEqual([
        'transactions',
        'processing',
        'alerts',
        'maintenance',
        'imports',
      ]);
      expect(dashboard.workers).toBe(0);
      expect(Date.now() - Date.parse(dashboard.generated_at)).toBeLessThan(60_000);
    });
  });

  describe('end to end: calls through the agent and real worker processes', () => {
    let h: AgentHarness;
    let app: FastifyInstance;
    let url: string;

    beforeAll(async () => {
      h = await startAgentHarness(2);
      // 1 per second plus a connect fee of 1: a call of n seconds costs n + 1, to the child and to its parent.
      await seed(h.ctx, {
        ...perSecondRating('39', 1),
        accounts: [
          account('parent', { balance: 1_000_000n }),
          account('child', { balance: 1_000_000n, linked_accounts: ['parent'] }),
          account('broke', { balance: -50n }),
        ],
      });
      app = await buildApi(h.ctx);
      url = await app.listen({ host: '127.0.0.1', port: 0 });
    });

    afterAll(async () => {
      await app?.close();
      await h?.close();
    });

    it('counts a recorded call once with its caller fee, a running call once, and the worker processes', async () => {
      const end = new Date(Date.now() - 5_000);
      const begin = new Date(end.getTime() - 10_000);
      const recorded = await h.rest('/v1/record_transaction', {
        transaction_tag: 'rec-1',
        account_tag: 'child',
        source: '100',
        destination: '393299',
        timestamp_begin: begin.toISOString(),
        timestamp_end: end.toISOString(),
      });
      expect(recorded.body).toMatchObject({ ok: true });
      // The parent holds its own share of the call.
      await waitFor(
        async () => (await h.ctx.mongo.collections.transactions.countDocuments({ transaction_tag: 'rec-1' })) === 2,
        'both records',
      );
      expect(
        (await h.rest('/v1/begin_transaction', { transaction_tag: 'run-1', account_tag: 'child', source: '100', destination: '393299' }))
          .body,
      ).toMatchObject({ ok: true });
      // A reservation is a slot, not a call.
      expect(
        (await h.rest('/v1/authorization', { transaction_tag: 'held-1', account_tag: 'parent', source: '100', destination: '393299' }))
          .body,
      ).toMatchObject({ authorized: true });

      const answer = await graphql<{ dashboard: Record<string, never> }>(url, DASHBOARD);
      expect(answer.status).toBe(200);
      const dashboard = answer.body.data!.dashboard as unknown as {
        calls_per_minute: Array<{ calls: number; revenue: number }>;
        revenue_per_hour: Array<{ calls: number; revenue: number }>;
        running_calls: number;
        accounts_below_threshold: Array<{ account_tag: string }>;
        workers: number;
      };
      const total = (buckets: Array<{ calls: number; revenue: number }>) =>
        buckets.reduce((t, b) => ({ calls: t.calls + b.calls, revenue: t.revenue + b.revenue }), { calls: 0, revenue: 0 });
      expect(total(dashboard.calls_per_minute)).toEqual({ calls: 1, revenue: 11 });
      expect(total(dashboard.revenue_per_hour)).toEqual({ calls: 1, revenue: 11 });
      expect(dashboard.running_calls).toBe(1);
      expect(dashboard.accounts_below_threshold.map((a) => a.account_tag)).toEqual(['broke']);
      expect(dashboard.workers).toBe(2);
    });
  });
});
