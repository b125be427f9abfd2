import type { FastifyInstance } from 'fastify';
import { buildAgent } from '../../../src/agent/app';
import { buildApi } from '../../../src/api/app';
import { createTestContext, graphql, TestContext } from '../../support/harness';

const A = 'limit-token-a-0123456789';
const B = 'limit-token-b-0123456789';
const AGENT = 'limit-agent-0123456789';

describe('request limits', () => {
  let ctx: TestContext;
  let api: FastifyInstance;
  let agent: FastifyInstance;
  let apiUrl: string;
  let agentUrl: string;

  beforeAll(async () => {
    ctx = await createTestContext({
      RATING_TOKENS: `a:read:${A},b:read:${B},switch:agent:${AGENT}`,
      RATE_LIMIT_MAX: '3',
      RATE_LIMIT_WINDOW_MS: '60000',
      GRAPHQL_MAX_DEPTH: '3',
      BODY_LIMIT_BYTES: '2048',
    });
    api = await buildApi(ctx);
    agent = await buildAgent(ctx);
    apiUrl = await api.listen({ host: '127.0.0.1', port: 0 });
    agentUrl = await agent.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await api?.close();
    await agent?.close();
    await ctx?.destroy();
  });

  it('answers RATE_LIMITED with HTTP 429 and Retry-After once a token used its budget; other tokens are unaffected', async () => {
    const asA = () => graphql(apiUrl, '{ version }', undefined, { authorization: `Bearer ${A}` });
    for (let i = 0; i < 3; i++) expect((await asA()).status).toBe(200);

    const response = await fetch(`${apiUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${A}` },
      body: JSON.stringify({ query: '{ version }' }),
    });
    expect(response.status).toBe(429);
    const retryAfter = Number(response.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await response.json()).toEqual({
      errors: [
        {
          message: expect.stringContaining('Rate limit of 3 requests per 60000 ms exceeded'),
          extensions: { code: 'RATE_LIMITED', retryAfter, limit: 3, windowMs: 60000 },
        },
      ],
    });

    expect((await graphql(apiUrl, '{ version }', undefined, { authorization: `Bearer ${B}` })).status).toBe(200);
    // Probes and scrapes are never limited.
    for (let i = 0; i < 5; i++) expect((await fetch(`${apiUrl}/health`)).status).toBe(200);
  });

  it('limits the REST mirror too, answering JSON', async () => {
    const post = () =>
      fetch(`${agentUrl}/v1/authorization`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${AGENT}` },
        // Invalid on purpose: answered at once, without waiting for a worker.
        body: JSON.stringify({}),
      });
    for (let i = 0; i < 3; i++) expect((await post()).status).not.toBe(429);
    const limited = await post();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toContain('application/json');
    expect(await limited.json()).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
  });

  it('refuses documents deeper than GRAPHQL_MAX_DEPTH with HTTP 400', async () => {
    const deep = '{ __schema { types { fields { type { name } } } } }';
    const { status, body } = await graphql(apiUrl, deep, undefined, { authorization: `Bearer ${B}` });
    expect(status).toBe(400);
    expect(JSON.stringify(body.errors)).toContain('exceeds the query depth limit of 3');
  });

  it('refuses bodies larger than BODY_LIMIT_BYTES with HTTP 413', async () => {
    const response = await fetch(`${apiUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${B}` },
      body: JSON.stringify({ query: `{ version } # ${'x'.repeat(4096)}` }),
    });
    expect(response.status).toBe(413);
  });
});
