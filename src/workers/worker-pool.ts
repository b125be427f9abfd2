import type { Job, Worker } from 'bullmq';
import { DecisionMemory } from './transactions/decision-memory';
import { AuthorizationReads } from './transactions/authorization-reads';
import { BegunEntries } from './transactions/begun-entries';
import { SettledMarkers } from '../shared/domain/ledger';
import { LeanWorker } from './lean-worker';
import type { AppContext } from '../shared/domain/context';
import { instrumentWorker } from '../shared/domain/metrics';
import { QueueNames } from '../shared/domain/queues/names';
import { bullmqPrefix } from '../shared/domain/queues/queues';
import { RatingDataCache } from '../shared/domain/rating-data/cache';
import { ImportAccountCache } from './imports/account-cache';
import { END_CALL_SCHEDULER_ID, scheduleMaintenance } from './maintenance/schedule';
import { processorsFor } from './processors';
import { CallConsumer } from './call-consumer';
import { transactionProcessor } from './transactions/processor';

export interface WorkerPool {
  workers: Worker[];
  /** Stops taking jobs and waits for the ones in hand to finish. */
  close(): Promise<void>;
}

/** One BullMQ worker per queue, each on its own blocking connection, and the call queue's consumer. */
export async function startWorkers(ctx: AppContext, queues: string[] = Object.values(QueueNames)): Promise<WorkerPool> {
  const rating = await RatingDataCache.start(ctx);
  const importAccounts = await ImportAccountCache.start(ctx);
  const processInline = ctx.config.processingInline && queues.includes(QueueNames.processing);
  const deps = {
    ctx,
    rating,
    importAccounts,
    decisions: new DecisionMemory(),
    settledMarkers: new SettledMarkers(),
    authorizationReads: new AuthorizationReads(),
    // An end charges in its own write only where charging belongs to this process (end-charge.ts).
    begunEntries: processInline ? new BegunEntries() : undefined,
    processInline,
  };
  const processors = processorsFor(deps);
  // The agent's operations come through the call queue, not BullMQ (src/shared/infra/call-queue.ts).
  const calls = queues.includes(QueueNames.transactions)
    ? new CallConsumer(ctx, transactionProcessor(deps), ctx.config.workerConcurrency)
    : undefined;
  await calls?.start();
  const workers = queues
    .filter((name) => name !== QueueNames.transactions)
    .map((name) => {
      const processor = processors[name];
      if (!processor) throw new Error(`no processor for queue ${name}`);
      const worker = new LeanWorker(name, processor, {
        connection: ctx.newRedis(),
        prefix: bullmqPrefix(ctx.config),
        // Processing has its own figure: a settle window holds its jobs longer (PROCESSING_WINDOW_MS).
        concurrency: name === QueueNames.processing ? ctx.config.processingConcurrency : ctx.config.workerConcurrency,
        // A job whose worker died is picked up again after this long.
        lockDuration: ctx.config.jobLockMs,
        stalledInterval: Math.max(500, Math.floor(ctx.config.jobLockMs / 2)),
        maxStalledCount: 5,
      });
      worker.on('failed', (job: Job | undefined, err: Error) =>
        ctx.logger.warn({ queue: name, jobId: job?.id, attempt: job?.attemptsMade, err }, 'job failed'),
      );
      worker.on('error', (err) => ctx.logger.error({ queue: name, err }, 'worker error'));
      instrumentWorker(ctx, worker);
      return worker;
    });
  // Idempotent: every worker process registers the same single schedule, and registers it again every
  // long-call period, so a changed interval takes effect. A Redis that lost its data gets it back within
  // an end-call period: that check is the prepaid guard of calls sharing a balance (docs/AGENT.md), so
  // it is looked for that often (one read) and registered again at once when missing.
  const timers: NodeJS.Timeout[] = [];
  if (queues.includes(QueueNames.maintenance)) {
    await scheduleMaintenance(ctx);
    const register = () =>
      scheduleMaintenance(ctx).catch((err: unknown) =>
        ctx.logger.warn({ err }, 'could not register the maintenance schedule; next period'),
      );
    timers.push(setInterval(() => void register(), ctx.config.longCallScanSeconds * 1000));
    timers.push(
      setInterval(() => {
        ctx.queues.maintenance
          .getJobScheduler(END_CALL_SCHEDULER_ID)
          .then((found) => (found ? undefined : register()))
          .catch((err: unknown) => ctx.logger.warn({ err }, 'could not read the maintenance schedule; next period'));
      }, ctx.config.endCallScanSeconds * 1000),
    );
    for (const timer of timers) timer.unref();
  }
  ctx.logger.info({ queues, concurrency: ctx.config.workerConcurrency }, 'workers started');
  return {
    workers,
    close: async () => {
      for (const timer of timers) clearInterval(timer);
      await Promise.all([...workers.map((w) => w.close()), calls?.close()]);
      await Promise.all([rating.close(), importAccounts.close()]);
    },
  };
}
