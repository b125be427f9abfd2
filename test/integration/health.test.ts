import type { FastifyInstance } from 'fastify';
import { buildAgent } from '../../src/agent/app';
import { buildApi } from '../../src/api/app';
import { serviceVersion } from '../../src/shared/infra/version';
import { createTestContext, graphql, TestContext } from '../support/harness';

describe.each([
  ['API', buildApi],
  ['agent', buildAgent],
])('%s health, readiness and GraphQL', (_name, build) => {
  let ctx: TestContext;
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    ctx = await createTestContext();
    app = await build(ctx);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await app.close();
    await ctx.destroy();
  });

  it('answers /health', async () => {
    const response = await fetch(`${url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', version: serviceVersion });
  });

  it('answers /ready with both stores reachable', async () => {
    const response = await fetch(`${url}/ready`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready', mongo: true, redis: true });
  });

  it('answers the version query at /graphql', async () => {
    const { status, body } = await graphql(url, '{ version }');
    expect(status).toBe(200);
    expect(body.data).toEqual({ version: serviceVersion });
  });

  it('answers a syntax error with HTTP 400', async () => {
    const { status, body } = await graphql(url, '{ version ');
    expect(status).toBe(400);
    expect(body.errors?.length).toBeGreaterThan(0);
  });
});
