import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { latestAudit } from '../ledger/audit';
import type { AppContext } from '../context';
import { queueCounts } from '../queues/all-queues';
import type { AlertChannel } from '../queues/payloads';
import { withTimeout } from '../../infra/time-limit';

/** Job states reported per queue; what an operator watches for backlog and trouble. */
const QUEUE_STATES = ['waiting', 'active', 'failed', 'delayed'] as const;
/** A scrape must answer even when Redis does not; queue gauges are left out after this long. */
const QUEUE_COUNT_TIMEOUT_MS = 2000;

/**
 * The metrics of one process. Each AppContext gets its own Registry (never prom-client's global
 * one), so several apps or test contexts in one Node process never collide on metric names.
 */
export class ProcessMetrics {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'rating_http_request_duration_seconds',
    help: 'HTTP request latency by server, route, method and status',
    labelNames: ['server', 'route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'rating_job_duration_seconds',
    help: 'Time a worker spent processing a job, by queue and outcome',
    labelNames: ['queue', 'outcome'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly ratedCalls = new Counter({
    name: 'rating_rated_calls_total',
    help: 'Calls rated and charged by this process',
    registers: [this.registry],
  });

  readonly debitedAmount = new Counter({
    name: 'rating_debited_amount_total',
    help: 'Sum of fees debited by this process, in minor currency units',
    registers: [this.registry],
  });

  readonly creditedAmount = new Counter({
    name: 'rating_credited_amount_total',
    help: 'Sum of fees credited back (rollbacks) by this process, in minor currency units',
    registers: [this.registry],
  });

  readonly alertDeliveries = new Counter({
    name: 'rating_alert_deliveries_total',
    help: 'Alert delivery attempts by channel and outcome',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor(ctx: AppContext) {
    const logger = ctx.logger;
    new Gauge({
      name: 'rating_queue_jobs',
      help: 'Jobs per queue and state, read from Redis at scrape time',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          const counts = await withTimeout(queueCounts(ctx.queues, QUEUE_STATES), QUEUE_COUNT_TIMEOUT_MS);
          if (counts === 'timeout') {
            logger.warn('queue counts not read in time; left out of this scrape');
            return;
          }
          for (const queue of counts) for (const state of QUEUE_STATES) this.set({ queue: queue.name, state }, queue.counts[state] ?? 0);
        } catch (err) {
          logger.warn({ err }, 'queue counts could not be read');
        }
      },
    });
    new Gauge({
      name: 'rating_ledger_audit',
      help: 'Figures of the last ledger audit (AUDIT_INTERVAL_SECONDS): differences and call_problems (both must be 0), pending_markers, records_in_flight, age_seconds',
      labelNames: ['figure'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          const last = await latestAudit(ctx.mongo.db);
          if (!last) return;
          this.set({ figure: 'differences' }, last.report.differences.length);
          // Audits stored by an earlier version have no call check.
          this.set({ figure: 'call_problems' }, last.report.calls?.length ?? 0);
          this.set({ figure: 'pending_markers' }, last.report.pending_markers);
          this.set({ figure: 'records_in_flight' }, last.report.records_in_flight);
          this.set({ figure: 'age_seconds' }, Math.round((Date.now() - last.at.getTime()) / 1000));
        } catch (err) {
          logger.warn({ err }, 'last ledger audit could not be read');
        }
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }
}

const byContext = new WeakMap<AppContext, ProcessMetrics>();

/** The metrics of the process that owns `ctx`, created on first use. */
export function metricsFor(ctx: AppContext): ProcessMetrics {
  let metrics = byContext.get(ctx);
  if (!metrics) {
    metrics = new ProcessMetrics(ctx);
    byContext.set(ctx, metrics);
  }
  return metrics;
}

/** Counters take numbers; fees beyond 2^53 minor units lose precision here only, never in balances. */
const asNumber = (amount: bigint) => Number(amount);

/** A call was rated and its fee debited (processing or recordTransaction). */
export function recordRatedCall(ctx: AppContext, fee: bigint): void {
  const metrics = metricsFor(ctx);
  metrics.ratedCalls.inc();
  if (fee > 0n) metrics.debitedAmount.inc(asNumber(fee));
}

/** A fee was credited back (rollback of a processed call). */
export function recordCredit(ctx: AppContext, amount: bigint): void {
  if (amount > 0n) metricsFor(ctx).creditedAmount.inc(asNumber(amount));
}

export function recordAlertDelivery(ctx: AppContext, channel: AlertChannel, outcome: 'delivered' | 'failed'): void {
  metricsFor(ctx).alertDeliveries.inc({ channel, outcome });
}
