import type { FastifyInstance } from 'fastify';
import { buildAgent } from '../../../src/agent/app';
import { buildApi } from '../../../src/api/app';
import { createTestContext, graphql, TestContext } from '../../support/harness';

const tokens = {
  reader: 'reader-secret-0123456789',
  writer: 'writer-secret-0123456789',
  writeonly: 'writeonly-secret-0123456789',
  switch: 'switch-secret-0123456789',
};
const RATING_TOKENS = `reader:read:${tokens.reader},writer:read+write:${tokens.writer},writeonly:write:${tokens.writeonly},switch:agent:${tokens.switch}`;
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

describe('authentication and scopes (RATING_TOKENS)', () => {
  let ctx: TestContext;
  let api: FastifyInstance;
  let agent: FastifyInstance;
  let apiUrl: string;
  let agentUrl: string;

  beforeAll(async () => {
    ctx = await createTestContext({ RATING_TOKENS });
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

  it.each(['/health', '/ready', '/metrics'])('leaves %s open on both servers', async (path) => {
    expect((await fetch(`${apiUrl}${path}`)).status).toBe(200);
    expect((await fetch(`${agentUrl}${path}`)).status).toBe(200);
  });

  it('answers a request without a token with UNAUTHENTICATED and HTTP 401', async () => {
    const response = await fetch(`${apiUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ version }' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('Bearer');
    expect(await response.json()).toEqual({ errors: [{ message: 'Missing bearer token', extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('answers a wrong token with UNAUTHENTICATED and HTTP 401', async () => {
    const { status, body } = await graphql(apiUrl, '{ version }', undefined, bearer('not-a-real-token-at-all'));
    expect(status).toBe(401);
    expect(body.errors?.[0]).toMatchObject({ message: 'Invalid or revoked token', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('lets `read` run queries and refuses it mutations with FORBIDDEN and HTTP 403', async () => {
    expect(await graphql(apiUrl, '{ version }', undefined, bearer(tokens.reader))).toMatchObject({
      status: 200,
      body: { data: { version: expect.any(String) } },
    });
    const { status, body } = await graphql(apiUrl, 'mutation { __typename }', undefined, bearer(tokens.reader));
    expect(status).toBe(403);
    expect(body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN', requiredScopes: ['write'] } });
  });

  it('lets `write` run mutations; `write` alone does not read', async () => {
    expect(await graphql(apiUrl, 'mutation { __typename }', undefined, bearer(tokens.writer))).toMatchObject({
      status: 200,
      body: { data: { __typename: 'Mutation' } },
    });
    expect((await graphql(apiUrl, '{ version }', undefined, bearer(tokens.writeonly))).status).toBe(403);
  });

  it('judges the operation that runs when a document holds several', async () => {
    const doc = 'query Q { version } mutation M { __typename }';
    const asReader = (operationName: string) =>
      fetch(`${apiUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(tokens.reader) },
        body: JSON.stringify({ query: doc, operationName }),
      });
    expect((await asReader('Q')).status).toBe(200);
    expect((await asReader('M')).status).toBe(403);
  });

  it('checks GET queries too', async () => {
    const url = `${apiUrl}/graphql?query=${encodeURIComponent('{ version }')}`;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: bearer(tokens.reader) })).status).toBe(200);
  });

  it('refuses HEAD on /graphql (Fastify would run it as a GET without the GET checks): a read token cannot mutate through it', async () => {
    const mutation = 'mutation { createCarrier(carrier_tag: "head-made", host: "10.0.0.9", port: 5060) { id } }';
    const url = `${apiUrl}/graphql?query=${encodeURIComponent(mutation)}`;
    for (const token of [tokens.reader, tokens.writer]) {
      const response = await fetch(url, { method: 'HEAD', headers: bearer(token) });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, POST');
    }
    const agentHead = await fetch(`${agentUrl}/graphql?query=${encodeURIComponent('{ version }')}`, {
      method: 'HEAD',
      headers: bearer(tokens.switch),
    });
    expect(agentHead.status).toBe(405);
    const { body } = await graphql(apiUrl, '{ Carrier(carrier_tag: "head-made") { id } }', undefined, bearer(tokens.reader));
    expect(body.data).toEqual({ Carrier: null });
    expect((await fetch(`${apiUrl}/health`, { method: 'HEAD' })).status).toBe(200);
  });

  it('keeps the agent for `agent` tokens, on GraphQL and REST', async () => {
    expect((await graphql(agentUrl, '{ version }', undefined, bearer(tokens.switch))).status).toBe(200);
    expect((await graphql(agentUrl, '{ version }', undefined, bearer(tokens.writer))).status).toBe(403);
    expect((await graphql(apiUrl, '{ version }', undefined, bearer(tokens.switch))).status).toBe(403);
    const rest = await fetch(`${agentUrl}/v1/authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ account_tag: 'x', destination: '39' }),
    });
    expect(rest.status).toBe(401);
    expect(await rest.json()).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('puts the queue board behind `write`, with Basic authentication for browsers', async () => {
    const board = `${apiUrl}/admin/queues`;
    const anonymous = await fetch(board);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Basic');
    expect((await fetch(board, { headers: bearer(tokens.reader) })).status).toBe(403);
    const page = await fetch(board, { headers: bearer(tokens.writer) });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const basic = `Basic ${Buffer.from(`admin:${tokens.writer}`).toString('base64')}`;
    const api = await fetch(`${board}/api/queues`, { headers: { authorization: basic } });
    expect(api.status).toBe(200);
    const names = ((await api.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name);
    // The BullMQ queues; the call queue (transactions) is not BullMQ's (src/shared/infra/call-queue.ts).
    expect(names).toEqual(expect.arrayContaining(['alerts', 'maintenance', 'processing', 'imports']));
  });

  it('requires a token on unknown routes too', async () => {
    expect((await fetch(`${apiUrl}/nothing-here`)).status).toBe(401);
    expect((await fetch(`${apiUrl}/nothing-here`, { headers: bearer(tokens.reader) })).status).toBe(404);
  });
});

describe('development without tokens', () => {
  let ctx: TestContext;
  let api: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    ctx = await createTestContext();
    api = await buildApi(ctx);
    url = await api.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await api?.close();
    await ctx?.destroy();
  });

  it('lets every request through', async () => {
    expect((await graphql(url, '{ version }')).status).toBe(200);
    expect((await graphql(url, 'mutation { __typename }')).status).toBe(200);
    expect((await graphql(url, '{ version }', undefined, bearer('whatever-the-client-sends'))).status).toBe(200);
  });
});
