import type { Processor } from 'bullmq';
import { QueueNames } from '../../shared/domain/queues/names';
import { alertProcessor } from '../alerts/processor';
import { importProcessor } from '../imports/processor';
import { maintenanceProcessor } from '../maintenance/processor';
import { processingDeps, type TransactionDeps } from '../transactions/deps';
import { processingProcessor } from '../transactions/processor';

/** The processor of each BullMQ queue, bound to the process's dependencies (the call queue's: worker-pool.ts). */
export function processorsFor(deps: TransactionDeps): Record<string, Processor> {
  const { ctx } = deps;
  return {
    [QueueNames.processing]: processingProcessor(processingDeps(deps)) as Processor,
    [QueueNames.alerts]: alertProcessor(ctx) as Processor,
    [QueueNames.maintenance]: maintenanceProcessor(deps) as Processor,
    [QueueNames.imports]: importProcessor(deps) as Processor,
  };
}
