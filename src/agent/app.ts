import { metricsFor } from '../shared/domain/metrics';
import type { FastifyInstance } from 'fastify';
import { agentAccess, type AccessPolicy } from '../shared/infra/auth/access';
import type { AppContext } from '../shared/domain/context';
import { registerGraphql } from '../shared/infra/http/graphql';
import { createHttpServer } from '../shared/infra/http/server';
import { ReplyInbox } from '../shared/infra/replies';
import { agentModules } from './graphql/schema';
import { AgentOperations } from './operations';
import { OPENAPI_PATH, openapiRest } from './rest/openapi';
import { recordBatchRest } from './rest/record-batch';
import { restV1 } from './rest/v1';

/** The agent's policy, with its OpenAPI document open as the health routes are (rest/openapi.ts says why). */
const access: AccessPolicy = (path) => (path === OPENAPI_PATH ? 'open' : agentAccess(path));

/** The real-time agent: GraphQL at /graphql, REST mirror under /v1 with its OpenAPI document, health routes. */
export async function buildAgent(ctx: AppContext): Promise<FastifyInstance> {
  const app = await createHttpServer(ctx, { name: 'agent', metrics: metricsFor(ctx), access, quietRequests: true });
  const inbox = new ReplyInbox(ctx.newRedis(), ctx.config.queuePrefix, ctx.logger);
  await inbox.start();
  app.addHook('onClose', async () => {
    await inbox.close();
  });
  const operations = new AgentOperations(ctx, inbox);
  await registerGraphql(app, ctx, agentModules(operations));
  await app.register(restV1, { operations });
  await app.register(recordBatchRest, { ctx });
  await app.register(openapiRest, { recordBatchMax: ctx.config.recordBatchMax });
  return app;
}
