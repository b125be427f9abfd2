/** Single-machine mode: API (in a worker thread), agent and workers in one process, with local servers when no URLs are set. */
import { buildAgent } from './agent/app';
import { buildApi } from './api/app';
import { startApiThread } from './api/thread';
import { listen, runProcess } from './shared/domain/boot';
import { startWorkers } from './workers/worker-pool';

void runProcess(
  'rating',
  [
    async (ctx) => startWorkers(ctx),
    // Its own thread: API queries cannot hold the agent's and the workers' event loop (src/api/thread.ts).
    async (ctx) => (ctx.config.apiThread ? startApiThread(ctx) : listen(await buildApi(ctx), ctx.config.host, ctx.config.apiPort)),
    async (ctx) => listen(await buildAgent(ctx), ctx.config.host, ctx.config.agentPort),
  ],
  { localServices: true },
);
