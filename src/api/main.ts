import { listen, runProcess } from '../shared/domain/boot';
import { buildApi } from './app';

void runProcess('api', [async (ctx) => listen(await buildApi(ctx), ctx.config.host, ctx.config.apiPort)], { localServices: false });
