import { metricsFor } from '../shared/domain/metrics';
import { listen, runProcess } from '../shared/domain/boot';
import { createHttpServer } from '../shared/infra/http/server';
import { startWorkers } from './worker-pool';

/** A standalone worker: the queue consumers plus a small HTTP server for health checks and /metrics. */
void runProcess(
  'worker',
  [
    async (ctx) => startWorkers(ctx),
    async (ctx) =>
      listen(await createHttpServer(ctx, { name: 'worker', metrics: metricsFor(ctx) }), ctx.config.host, ctx.config.workerPort),
  ],
  { localServices: false },
);
