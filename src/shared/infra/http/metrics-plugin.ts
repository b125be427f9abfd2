import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import type { Histogram, Registry } from 'prom-client';

/** The registry a process serves and its request-latency histogram (src/shared/domain/metrics/registry.ts). */
export interface HttpMetrics {
  registry: Registry;
  httpDuration: Histogram<'server' | 'route' | 'method' | 'status'>;
}

export interface MetricsPluginOptions {
  metrics: HttpMetrics;
  server: string;
}

/** `/metrics` in the Prometheus text format, and the latency of every request served. */
const metricsPlugin: FastifyPluginAsync<MetricsPluginOptions> = async (app, { metrics, server }) => {
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
