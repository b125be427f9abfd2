import type { Job, Worker } from 'bullmq';
import type { AppContext } from '../context';
import { metricsFor } from './registry';

/** Records how long each job of `worker` took, from BullMQ's own start and finish stamps. */
export function instrumentWorker(ctx: AppContext, worker: Worker): void {
  const { jobDuration } = metricsFor(ctx);
  const observe = (job: Job | undefined, outcome: 'completed' | 'failed') => {
    if (!job?.processedOn) return;
    // A failure that will be retried has no finishedOn yet; the event fires right after it.
    const finished = job.finishedOn ?? Date.now();
    jobDuration.observe({ queue: worker.name, outcome }, Math.max(0, finished - job.processedOn) / 1000);
  };
  worker.on('completed', (job) => observe(job, 'completed'));
  worker.on('failed', (job) => observe(job, 'failed'));
}
