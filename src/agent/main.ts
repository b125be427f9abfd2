import { listen, runProcess } from '../shared/domain/boot';
import { buildAgent } from './app';

void runProcess('agent', [async (ctx) => listen(await buildAgent(ctx), ctx.config.host, ctx.config.agentPort)], { localServices: false });
