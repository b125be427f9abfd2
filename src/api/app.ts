import { allQueues } from '../shared/domain/queues/all-queues';
import { metricsFor } from '../shared/domain/metrics';
import type { FastifyInstance } from 'fastify';
import { apiAccess } from '../shared/infra/auth/access';
import type { AppContext } from '../shared/domain/context';
import { registerGraphql } from '../shared/infra/http/graphql';
import { registerQueueBoard } from '../shared/infra/http/queue-board';
import { createHttpServer } from '../shared/infra/http/server';
import { writeConcernOf } from '../shared/infra/mongo';
import { connectMongo } from '../shared/domain/store';
import { RatingDataCache } from '../shared/domain/rating-data/cache';
import consolePlugin from './console-plugin';
import type { ApiServices } from './graphql/context';
import { apiModules } from './graphql/schema';
import queryGate from './query-gate';
import { importsRoutes } from './rest/imports';
import { rateDecksRoutes } from './rest/rate-decks';
import { createApiStores } from './store';

/**
 * The management API: GraphQL at /graphql plus health routes. Its GraphQL requests take turns
 * (API_MAX_CONCURRENT_QUERIES, ./query-gate.ts) and its stores use a MongoDB pool of their own
 * (API_MONGO_POOL_SIZE; 0 shares the process's), so that in one process with the agent and the
 * workers (`npm start`) API queries cannot starve them (issue 10).
 */
export async function buildApi(ctx: AppContext): Promise<FastifyInstance> {
  const app = await createHttpServer(ctx, { name: 'api', metrics: metricsFor(ctx), access: apiAccess });
  const poolSize = ctx.config.apiMongoPoolSize;
  const mongo =
    poolSize > 0
      ? await connectMongo(ctx.mongo.url, ctx.config.mongoDb, {
          maxPoolSize: poolSize,
          appName: 'rating-api',
          writeConcern: writeConcernOf(ctx.config),
        })
      : ctx.mongo;
  if (mongo !== ctx.mongo) app.addHook('onClose', () => mongo.close());
  const apiCtx: AppContext = mongo === ctx.mongo ? ctx : { ...ctx, mongo };
  // Routing answers (destination_rate, leastCostRouting) come from the in-memory rating index.
  const ratingData = await RatingDataCache.start(apiCtx);
  app.addHook('onClose', () => ratingData.close());
  await app.register(queryGate, { ctx });
  await registerGraphql<ApiServices>(app, apiCtx, apiModules, { ratingData, stores: createApiStores(apiCtx, ratingData) });
  await registerQueueBoard(app, allQueues(ctx.queues));
  await app.register(rateDecksRoutes, { ctx: apiCtx, ratingData }); // POST /v1/rate-decks (docs/RATE-DECKS.md)
  await app.register(importsRoutes, { ctx: apiCtx }); // POST /v1/imports: CDR uploads (docs/IMPORTS.md)
  await app.register(consolePlugin); // the operator console at /console/ (dist/console)
  return app;
}
