/** Single-machine mode: API, agent and workers in one process, with local servers when no URLs are set. */
import { buildAgent } from './agent/app';
import { buildApi } from './api/app';
import { listen, runProcess } from './shared/boot';
import { startWorkers } from './workers/worker-pool';

void runProcess(
  'rating',
  [
    async (ctx) => startWorkers(ctx),
    async (ctx) => listen(await buildApi(ctx), ctx.config.host, ctx.config.apiPort),
    async (ctx) => listen(await buildAgent(ctx), ctx.config.host, ctx.config.agentPort),
  ],
  { localServices: true },
);
