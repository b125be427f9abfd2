import type { Document, Filter } from 'mongodb';
import type { Config } from '../../shared/infra/config';
import { isReservation, type AccountDoc } from '../../shared/domain/types';
import type { Collections } from '../../shared/domain/store';
import { queueCounts } from '../../shared/domain/queues/all-queues';
import { QueueNames } from '../../shared/domain/queues/names';
import type { Queues } from '../../shared/domain/queues/queues';
import type { ReadLimits } from './documents';
import { RedisUnanswered } from '../../shared/infra/store-errors';
import { withinOrFail } from '../../shared/infra/time-limit';

export interface TrafficBucket {
  /** Start of the bucket (inclusive); it ends where the next one starts. */
  start: Date;
  /** Calls that ended in the bucket, each counted once (by its caller's own record). */
  calls: number;
  /** What those calls' callers were charged (the fees of their own records). */
  revenue: bigint;
}

export interface QueueDepth {
  name: string;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
}

export interface Dashboard {
  calls_per_minute: TrafficBucket[];
  revenue_per_hour: TrafficBucket[];
  running_calls: number;
  accounts_below_threshold: AccountDoc[];
  accounts_below_threshold_count: number;
  queues: QueueDepth[];
  workers: number;
  generated_at: Date;
}

/** How long one process reuses a dashboard: the console's home page polls, the numbers move slowly. */
export const DASHBOARD_CACHE_MS = 15_000;
/** Accounts listed below their alert line (the count covers all of them). */
export const BELOW_THRESHOLD_LIMIT = 50;

/** How long the page waits for Redis (queue depths, workers): unreachable, it answers a clear error, not never. */
const REDIS_READ_MS = 2000;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Where the balance alerts draw the line (src/shared/domain/alerts/balance-alerts.ts): NEGATIVE_BALANCE below
 * zero, LOW_BALANCE below a positive threshold. Both together: below max(threshold, 0).
 */
export function alertLine(threshold: bigint): bigint {
  return threshold > 0n ? threshold : 0n;
}

/**
 * A record is its caller's own when it names the account as its caller (records of older versions
 * have no origin_account_tag and are their account's own). A parent's share of a child's call and an
 * inbound receiver's record name another caller: counting only own records counts each call once.
 */
const OWN_RECORD = { $eq: ['$account_tag', { $ifNull: ['$origin_account_tag', '$account_tag'] }] };

/**
 * Accounts holding at least one running entry. Every entry has an `id`, so this is the same set as
 * with_running_transactions' `running_transactions.0` existing, put so that the sparse index on
 * running_transactions.id (src/shared/infra/mongo.ts), which holds only those accounts, serves it.
 */
export const HAS_RUNNING_ENTRIES: Filter<AccountDoc> = { 'running_transactions.id': { $exists: true } };

/**
 * The console's home page figures. Every read is an index range, never a whole collection:
 * - traffic: transactions by `timestamp_end` (index), grouped into buckets by the server;
 * - running calls: the accounts in the sparse index of running entries;
 * - accounts below their alert line: the `balance` index below the highest line any account has
 *   (the highest per-account threshold comes from the `balance_alert_threshold` index, one key);
 * - queues and workers: BullMQ's counters in Redis, through this process's Queue handles.
 * One dashboard is kept per process for DASHBOARD_CACHE_MS; concurrent requests share one computation.
 */
export class DashboardStore {
  private cached: { until: number; value: Promise<Dashboard> } | undefined;

  constructor(
    private readonly collections: Pick<Collections, 'accounts' | 'transactions'>,
    private readonly queues: Queues,
    private readonly config: Pick<Config, 'lowBalanceThreshold'>,
    private readonly reads: ReadLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<Dashboard> {
    const now = this.now();
    if (this.cached && this.cached.until > now) return this.cached.value;
    const value = this.compute(now);
    const entry = { until: now + DASHBOARD_CACHE_MS, value };
    this.cached = entry;
    // A failure is not kept: the next request tries again.
    value.catch(() => {
      if (this.cached === entry) this.cached = undefined;
    });
    return value;
  }

  private async compute(now: number): Promise<Dashboard> {
    const [callsPerMinute, revenuePerHour, runningCalls, below, queues, workers] = await Promise.all([
      this.traffic(now, MINUTE, 60),
      this.traffic(now, HOUR, 24),
      this.runningCalls(),
      this.belowThreshold(),
      this.queueDepths(),
      this.workers(),
    ]);
    return {
      calls_per_minute: callsPerMinute,
      revenue_per_hour: revenuePerHour,
      running_calls: runningCalls,
      accounts_below_threshold: below.accounts,
      accounts_below_threshold_count: below.count,
      queues,
      workers,
      generated_at: new Date(now),
    };
  }

  /**
   * `count` buckets of `size` ms, the last one holding `now` (so it is still filling), by the calls'
   * end: a record is written when its call ends, and that is when its fee is charged.
   */
  async traffic(now: number, size: number, count: number): Promise<TrafficBucket[]> {
    const end = Math.floor(now / size) * size + size;
    const start = end - count * size;
    const epoch = new Date(0);
    const pipeline: Document[] = [
      // Calls the engine charged (or is charging): not records written raw through the API (no state,
      // nobody was charged) nor calls being refunded.
      { $match: { timestamp_end: { $gte: new Date(start), $lt: new Date(end) }, state: { $in: ['charged', 'imported', 'pending'] } } },
      {
        $group: {
          // The bucket's start: the end stamp minus its remainder within the bucket (dates minus dates are ms).
          _id: { $subtract: ['$timestamp_end', { $mod: [{ $subtract: ['$timestamp_end', epoch] }, size] }] },
          calls: { $sum: { $cond: [OWN_RECORD, 1, 0] } },
          revenue: { $sum: { $cond: [OWN_RECORD, '$fee', 0] } },
        },
      },
    ];
    const groups = await this.collections.transactions
      .aggregate<{ _id: Date; calls: number; revenue: bigint | number }>(pipeline, { maxTimeMS: this.reads.maxTimeMS })
      .toArray();
    const byStart = new Map(groups.map((g) => [new Date(g._id).getTime(), g] as const));
    return Array.from({ length: count }, (_, i) => {
      const at = start + i * size;
      const group = byStart.get(at);
      // $sum gives int64 (bigint) over fees, int32 (number) when it added only zeros.
      return { start: new Date(at), calls: Number(group?.calls ?? 0), revenue: BigInt(group?.revenue ?? 0) };
    });
  }

  /**
   * Calls running now (in progress, or ended and awaiting processing), each counted once: by its
   * caller's own entry (parents and inbound receivers hold entries of the same call), reservations
   * (slots held for calls not begun) left out.
   */
  async runningCalls(): Promise<number> {
    const cursor = this.collections.accounts.find<Pick<AccountDoc, 'account_tag' | 'running_transactions'>>(HAS_RUNNING_ENTRIES, {
      projection: { _id: 0, account_tag: 1, 'running_transactions.origin_account_tag': 1, 'running_transactions.reserved_until': 1 },
      maxTimeMS: this.reads.maxTimeMS,
    });
    let calls = 0;
    for await (const account of cursor) {
      for (const entry of account.running_transactions ?? []) {
        if (!isReservation(entry) && entry.origin_account_tag === account.account_tag) calls += 1;
      }
    }
    return calls;
  }

  /**
   * Accounts (prepaid and postpaid alike, as the alerts treat them) whose balance is below their alert
   * line: their own threshold, or LOW_BALANCE_THRESHOLD when they have none (alertLine). No index can
   * hold "balance below the account's own threshold", so the read is the `balance` index range below
   * the highest line in force, and the per-account comparison is made on that range only.
   */
  async belowThreshold(): Promise<{ accounts: AccountDoc[]; count: number }> {
    const { accounts } = this.collections;
    const defaultLine = alertLine(this.config.lowBalanceThreshold);
    const highest = await accounts.findOne(
      { balance_alert_threshold: { $ne: null } },
      { sort: { balance_alert_threshold: -1 }, projection: { _id: 0, balance_alert_threshold: 1 }, maxTimeMS: this.reads.maxTimeMS },
    );
    const highestOwn = alertLine(highest?.balance_alert_threshold ?? 0n);
    const bound = highestOwn > defaultLine ? highestOwn : defaultLine;
    const filter: Filter<AccountDoc> = {
      balance: { $lt: bound },
      $or: [
        { balance_alert_threshold: null, balance: { $lt: defaultLine } },
        { balance_alert_threshold: { $ne: null }, $expr: { $lt: ['$balance', { $max: ['$balance_alert_threshold', 0] }] } },
      ],
    };
    const [list, count] = await Promise.all([
      accounts
        .find(filter, { maxTimeMS: this.reads.maxTimeMS })
        .sort({ balance: 1, account_tag: 1 })
        .limit(BELOW_THRESHOLD_LIMIT)
        .toArray(),
      accounts.countDocuments(filter, { maxTimeMS: this.reads.maxTimeMS }),
    ]);
    return { accounts: list, count };
  }

  /** Every queue of src/shared/domain/queues/names.ts, through this process's handles (AppContext.queues). */
  async queueDepths(): Promise<QueueDepth[]> {
    const counts = await withinOrFail(
      queueCounts(this.queues, ['wait', 'prioritized', 'active', 'delayed', 'failed']),
      REDIS_READ_MS,
      () => new RedisUnanswered('the queue depths'),
    );
    const byName = new Map(counts.map((q) => [q.name, q.counts] as const));
    return Object.values(QueueNames).map((name) => {
      const counts = byName.get(name);
      if (!counts) throw new Error(`no queue handle for ${name}`);
      // Prioritized jobs wait too (BullMQ keeps them apart from the plain waiting list).
      return {
        name,
        waiting: (counts.wait ?? 0) + (counts.prioritized ?? 0),
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        failed: counts.failed ?? 0,
      };
    });
  }

  /**
   * BullMQ workers connected to the processing queue: each worker process runs one BullMQ Worker per
   * queue (src/workers/worker-pool.ts), which holds one named blocking connection, and Queue.getWorkers
   * lists those connections (CLIENT LIST). So this is the number of processes rating ended calls; a
   * process started for other queues only is not counted.
   */
  async workers(): Promise<number> {
    const workers = await withinOrFail(this.queues.processing.getWorkers(), REDIS_READ_MS, () => new RedisUnanswered('the workers list'));
    return workers.length;
  }
}
