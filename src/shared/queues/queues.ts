import { DefaultJobOptions, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { QueueNames } from './names';
import type { AlertJob, ImportBatchJob, MaintenanceJob, ProcessingJob, TransactionJob } from './payloads';

/**
 * Retention keeps Redis bounded: finished jobs are trimmed by age and count.
 * Failed jobs stay longer so an operator can inspect them.
 */
export const retention = {
  removeOnComplete: { age: 3600, count: 10000 },
  removeOnFail: { age: 7 * 86400, count: 50000 },
} as const;

export const defaultJobOptions: Record<string, DefaultJobOptions> = {
  [QueueNames.transactions]: { ...retention, attempts: 1 },
  [QueueNames.processing]: { ...retention, attempts: 20, backoff: { type: 'exponential', delay: 500 } },
  [QueueNames.alerts]: { ...retention, attempts: 10, backoff: { type: 'exponential', delay: 1000 } },
  [QueueNames.maintenance]: { ...retention, attempts: 3, backoff: { type: 'fixed', delay: 5000 } },
  // A batch carries up to thousands of calls: keep few finished ones (their results are also stored in
  // MongoDB, import_batches). Retries are safe (every step is idempotent) and must outlast short outages.
  [QueueNames.imports]: {
    removeOnComplete: { age: 3600, count: 200 },
    removeOnFail: { age: 7 * 86400, count: 1000 },
    attempts: 20,
    backoff: { type: 'exponential', delay: 1000 },
  },
};

export interface Queues {
  transactions: Queue<TransactionJob>;
  processing: Queue<ProcessingJob>;
  alerts: Queue<AlertJob>;
  maintenance: Queue<MaintenanceJob>;
  imports: Queue<ImportBatchJob>;
  close(): Promise<void>;
}

export function createQueues(connection: Redis, prefix: string): Queues {
  const make = <T>(name: string) => {
    const queue = new Queue<T>(name, { connection, prefix, defaultJobOptions: defaultJobOptions[name] });
    // Every concurrent add() briefly listens for 'closing'; an agent under load has hundreds in flight.
    queue.setMaxListeners(0);
    return queue;
  };
  const queues = {
    transactions: make<TransactionJob>(QueueNames.transactions),
    processing: make<ProcessingJob>(QueueNames.processing),
    alerts: make<AlertJob>(QueueNames.alerts),
    maintenance: make<MaintenanceJob>(QueueNames.maintenance),
    imports: make<ImportBatchJob>(QueueNames.imports),
  };
  return {
    ...queues,
    close: async () => {
      await Promise.all(Object.values(queues).map((q) => q.close()));
    },
  };
}

/** QueueEvents blocks on its connection (XREAD BLOCK): pass it a connection of its own. */
export function createQueueEvents(ownConnection: Redis, prefix: string, name: string): QueueEvents {
  return new QueueEvents(name, { connection: ownConnection, prefix });
}
