import type { FastifyInstance } from 'fastify';
import { apiAccess } from '../shared/auth/access';
import type { AppContext } from '../shared/context';
import { registerGraphql } from '../shared/http/graphql';
import { registerQueueBoard } from '../shared/http/queue-board';
import { createHttpServer } from '../shared/http/server';
import { RatingDataCache } from '../shared/rating-data/cache';
import type { ApiServices } from './graphql/context';
import { apiModules } from './graphql/schema';
import { createApiStores } from './store';

/** The management API: GraphQL at /graphql plus health routes. */
export async function buildApi(ctx: AppContext): Promise<FastifyInstance> {
  const app = await createHttpServer(ctx, { name: 'api', access: apiAccess });
  // Routing answers (destination_rate, leastCostRouting) come from the in-memory rating index.
  const ratingData = await RatingDataCache.start(ctx);
  app.addHook('onClose', () => ratingData.close());
  await registerGraphql<ApiServices>(app, ctx, apiModules, { ratingData, stores: createApiStores(ctx, ratingData) });
  await registerQueueBoard(app, ctx);
  return app;
}
