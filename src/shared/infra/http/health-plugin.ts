import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import type { ServiceContext } from '../service-context';
import { pingMongo } from '../mongo';
import { pingRedis } from '../redis';
import { serviceVersion } from '../version';

/** `/health`: the process answers. `/ready`: it can reach MongoDB and Redis (503 otherwise). */
const healthPlugin: FastifyPluginAsync<{ ctx: ServiceContext }> = async (app, { ctx }) => {
  app.get('/health', async () => ({ status: 'ok', version: serviceVersion }));
  app.get('/ready', async (_request, reply) => {
    const [mongo, redis] = await Promise.all([pingMongo(ctx.mongo), pingRedis(ctx.redis)]);
    const ready = mongo && redis;
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', mongo, redis });
  });
};

export default fp(healthPlugin, { name: 'health' });
