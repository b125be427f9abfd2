import { listen, runProcess } from '../shared/boot';
import { createHttpServer } from '../shared/http/server';
import { startWorkers } from './worker-pool';

/** A standalone worker: the queue consumers plus a small HTTP server for health checks and /metrics. */
void runProcess(
  'worker',
  [
    async (ctx) => startWorkers(ctx),
    async (ctx) => listen(await createHttpServer(ctx, { name: 'worker' }), ctx.config.host, ctx.config.workerPort),
  ],
  { localServices: false },
);
