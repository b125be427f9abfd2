import type { Processor } from 'bullmq';
import type { AppContext } from '../../shared/context';
import { QueueNames } from '../../shared/queues/names';

/** The processor of each queue, bound to the process context. */
export function processorsFor(ctx: AppContext): Record<string, Processor> {
  const notYet: Processor = async (job) => {
    ctx.logger.warn({ queue: job.queueName, jobId: job.id }, 'no processor implemented yet');
    return { ok: false, reason: 'NOT_IMPLEMENTED' };
  };
  return {
    [QueueNames.transactions]: notYet,
    [QueueNames.processing]: notYet,
    [QueueNames.alerts]: notYet,
    [QueueNames.maintenance]: notYet,
  };
}
