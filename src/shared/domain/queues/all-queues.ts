import { Queue, type JobType } from 'bullmq';
import { CallQueue } from '../../infra/call-queue';
import type { Queues } from './queues';

/** Every BullMQ queue of the process, so dashboards and gauges follow when a queue is added. */
export function allQueues(queues: Queues): Queue[] {
  return Object.values(queues).filter((q): q is Queue => q instanceof Queue);
}

/** What a queue holds, per BullMQ job state asked for. */
export interface QueueCounts {
  name: string;
  counts: Record<string, number>;
}

/**
 * The counts of every queue, the call queue included. The call queue has one state, waiting (LLEN):
 * a job in a worker's hand is answered within its deadline and a failed one is not kept
 * (src/shared/infra/call-queue.ts), so every other state reads 0.
 */
export async function queueCounts(queues: Queues, states: readonly JobType[]): Promise<QueueCounts[]> {
  return Promise.all(
    Object.values(queues)
      .filter((q): q is Queue | CallQueue => q instanceof Queue || q instanceof CallQueue)
      .map(async (queue) => {
        if (queue instanceof Queue) return { name: queue.name, counts: await queue.getJobCounts(...states) };
        const waiting = await queue.waiting();
        return { name: queue.name, counts: Object.fromEntries(states.map((s) => [s, s === 'wait' || s === 'waiting' ? waiting : 0])) };
      }),
  );
}
