import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../shared/context';
import { registerGraphql } from '../shared/http/graphql';
import { createHttpServer } from '../shared/http/server';
import { apiModules } from './graphql/schema';

/** The management API: GraphQL at /graphql plus health routes. */
export async function buildApi(ctx: AppContext): Promise<FastifyInstance> {
  const app = await createHttpServer(ctx);
  await registerGraphql(app, ctx, apiModules);
  return app;
}
