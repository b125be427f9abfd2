import type { Processor } from 'bullmq';
import { QueueNames } from '../../shared/queues/names';
import type { TransactionDeps } from '../transactions/deps';
import { processingProcessor, transactionProcessor } from '../transactions/processor';

/** The processor of each queue, bound to the process's dependencies. */
export function processorsFor(deps: TransactionDeps): Record<string, Processor> {
  const { ctx } = deps;
  const notYet: Processor = async (job) => {
    ctx.logger.warn({ queue: job.queueName, jobId: job.id }, 'no processor implemented yet');
    return { ok: false, reason: 'NOT_IMPLEMENTED' };
  };
  return {
    [QueueNames.transactions]: transactionProcessor(deps) as Processor,
    [QueueNames.processing]: processingProcessor(deps) as Processor,
    [QueueNames.alerts]: notYet,
    [QueueNames.maintenance]: notYet,
  };
}
