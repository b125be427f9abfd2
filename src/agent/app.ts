import type { FastifyInstance } from 'fastify';
import { agentAccess } from '../shared/auth/access';
import type { AppContext } from '../shared/context';
import { registerGraphql } from '../shared/http/graphql';
import { createHttpServer } from '../shared/http/server';
import { createQueueEvents } from '../shared/queues/queues';
import { QueueNames } from '../shared/queues/names';
import { agentModules } from './graphql/schema';
import { AgentOperations } from './operations';
import { recordBatchRest } from './rest/record-batch';
import { restV1 } from './rest/v1';

/** The real-time agent: GraphQL at /graphql, REST mirror under /v1, health routes. */
export async function buildAgent(ctx: AppContext): Promise<FastifyInstance> {
  const app = await createHttpServer(ctx, { name: 'agent', access: agentAccess });
  const events = createQueueEvents(ctx.newRedis(), ctx.config.queuePrefix, QueueNames.transactions);
  await events.waitUntilReady();
  app.addHook('onClose', async () => {
    await events.close();
  });
  const operations = new AgentOperations(ctx, events);
  await registerGraphql(app, ctx, agentModules(operations));
  await app.register(restV1, { operations });
  await app.register(recordBatchRest, { ctx });
  return app;
}
