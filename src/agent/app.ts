import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../shared/context';
import { registerGraphql } from '../shared/http/graphql';
import { createHttpServer } from '../shared/http/server';
import { agentModules } from './graphql/schema';

/** The real-time agent: GraphQL at /graphql, REST mirror under /v1, health routes. */
export async function buildAgent(ctx: AppContext): Promise<FastifyInstance> {
  const app = await createHttpServer(ctx);
  await registerGraphql(app, ctx, agentModules);
  return app;
}
