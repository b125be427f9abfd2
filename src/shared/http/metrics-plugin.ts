import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context';
import { metricsFor } from '../metrics';

export interface MetricsPluginOptions {
  ctx: AppContext;
  server: string;
}

/** `/metrics` in the Prometheus text format, and the latency of every request served. */
const metricsPlugin: FastifyPluginAsync<MetricsPluginOptions> = async (app, { ctx, server }) => {
  const metrics = metricsFor(ctx);
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, not the URL, keeps the label set bounded; unmatched requests share one label.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpDuration.observe({ server, route, method: request.method, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
  app.get('/metrics', async (_request, reply) => {
    const body = await metrics.registry.metrics();
    return reply.header('content-type', metrics.registry.contentType).send(body);
  });
};

export default fp(metricsPlugin, { name: 'metrics' });
