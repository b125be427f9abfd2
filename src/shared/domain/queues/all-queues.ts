import { Queue } from 'bullmq';
import type { Queues } from './queues';

/** Every queue of the process, so dashboards and gauges follow when a queue is added. */
export function allQueues(queues: Queues): Queue[] {
  return Object.values(queues).filter((q): q is Queue => q instanceof Queue);
}
