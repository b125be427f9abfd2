import { DefaultJobOptions, Queue, QueueEvents } from 'bullmq';
import type { Config } from '../../infra/config';
import type { RedisClient } from '../../infra/redis';
import { CallQueue } from '../../infra/call-queue';
import { QueueNames } from './names';
import type { AlertJob, ImportJob, MaintenanceJob, ProcessingJob } from './payloads';

/**
 * Retention keeps Redis bounded: finished jobs are trimmed by age and count.
 * Failed jobs stay longer so an operator can inspect them.
 */
export const retention = {
  removeOnComplete: { age: 3600, count: 10000 },
  removeOnFail: { age: 7 * 86400, count: 50000 },
} as const;

/**
 * "End this call" (END_CALL) is raised once per call, and it is how the switch learns that prepaid calls
 * sharing a balance have used it up: it is retried at a steady pace for a day (longer than any call may
 * run) instead of being given up after the alerts' ten tries (about 17 minutes of a receiver down).
 */
export const endCallJobOptions = { attempts: 8640, backoff: { type: 'fixed', delay: 10_000 } } as const;

/**
 * Failed attempts' stack traces a job keeps. BullMQ keeps every one unless told, and rewrites the whole
 * list on each retry: an END_CALL retried every 10 s for a day against a receiver that is down grew by a
 * trace each time (megabytes a job, in the Redis that also carries the call queue).
 */
const STACK_TRACES_KEPT = 3;

export const defaultJobOptions: Record<string, DefaultJobOptions> = {
  [QueueNames.processing]: { ...retention, stackTraceLimit: STACK_TRACES_KEPT, attempts: 20, backoff: { type: 'exponential', delay: 500 } },
  [QueueNames.alerts]: { ...retention, stackTraceLimit: STACK_TRACES_KEPT, attempts: 10, backoff: { type: 'exponential', delay: 1000 } },
  [QueueNames.maintenance]: { ...retention, stackTraceLimit: STACK_TRACES_KEPT, attempts: 3, backoff: { type: 'fixed', delay: 5000 } },
  // A batch carries up to thousands of calls: keep few finished ones (their results are also stored in
  // MongoDB, import_batches). Retries are safe (every step is idempotent) and must outlast short outages.
  [QueueNames.imports]: {
    removeOnComplete: { age: 3600, count: 200 },
    removeOnFail: { age: 7 * 86400, count: 1000 },
    stackTraceLimit: STACK_TRACES_KEPT,
    attempts: 20,
    backoff: { type: 'exponential', delay: 1000 },
  },
};

/**
 * The BullMQ key prefix of the deployment. BullMQ names its keys `<prefix>:<queue>:...` and its Lua
 * scripts touch several keys of a queue at once (and build some key names inside the script), so on a
 * Redis Cluster all keys of a queue must hash to one slot: the prefix is a hash tag, `{rating}`.
 * One tag for all queues rather than one per queue: it is BullMQ's documented setup, keeps any
 * cross-queue operation (flows, parent/child) possible, and costs little here, because the queue that
 * carries the load (transactions: every agent request) would sit on a single slot under any tagging;
 * the cluster buys failover and room for the other keys (rate limits, alert state, announcements),
 * which keep the plain prefix and so spread over all slots. Cluster mode only: on a single server
 * the prefix stays `rating`, so the jobs and schedules of an existing deployment are not orphaned by
 * an upgrade (docs/DECISIONS.md, "Redis Cluster").
 */
export function bullmqPrefix(config: Pick<Config, 'queuePrefix' | 'redisClusterNodes'>): string {
  return config.redisClusterNodes ? `{${config.queuePrefix}}` : config.queuePrefix;
}

export interface Queues {
  /** The agent's operations: the call queue, not a BullMQ queue (src/shared/infra/call-queue.ts). */
  transactions: CallQueue;
  processing: Queue<ProcessingJob>;
  alerts: Queue<AlertJob>;
  maintenance: Queue<MaintenanceJob>;
  imports: Queue<ImportJob>;
  close(): Promise<void>;
}

/** `prefix`: bullmqPrefix(config). */
export function createQueues(connection: RedisClient, prefix: string): Queues {
  const make = <T>(name: string) => {
    const queue = new Queue<T>(name, { connection, prefix, defaultJobOptions: defaultJobOptions[name] });
    // Every concurrent add() briefly listens for 'closing'; an agent under load has hundreds in flight.
    queue.setMaxListeners(0);
    return queue;
  };
  const queues = {
    processing: make<ProcessingJob>(QueueNames.processing),
    alerts: make<AlertJob>(QueueNames.alerts),
    maintenance: make<MaintenanceJob>(QueueNames.maintenance),
    imports: make<ImportJob>(QueueNames.imports),
  };
  return {
    ...queues,
    transactions: new CallQueue(connection, prefix, QueueNames.transactions),
    close: async () => {
      await Promise.all(Object.values(queues).map((q) => q.close()));
    },
  };
}

/** QueueEvents blocks on its connection (XREAD BLOCK): pass it a connection of its own. `prefix`: bullmqPrefix(config). */
export function createQueueEvents(ownConnection: RedisClient, prefix: string, name: string): QueueEvents {
  return new QueueEvents(name, { connection: ownConnection, prefix });
}
