import { execFile } from 'node:child_process';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildAgent } from '../../../src/agent/app';
import { authorizationAnswerFields, operationAnswerFields } from '../../../src/agent/answers';
import { operationFields } from '../../../src/shared/domain/calls/operations';
import { createTestContext, TestContext } from '../../support/harness';

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { operationId: string; requestBody: { content: Record<string, { schema: { $ref: string } }> }; responses: Record<string, unknown> }
    >
  >;
  components: {
    schemas: Record<string, { properties: Record<string, { description?: string }>; required: string[] }>;
    securitySchemes: Record<string, unknown>;
  };
  security: unknown[];
};

const ROOT = path.resolve(__dirname, '../../..');

/**
 * Validates a document with @seriousme/openapi-schema-validator (the OpenAPI Initiative's JSON schemas
 * for 3.0/3.1). The package is ESM only and jest runs these tests as CommonJS: it runs in a child node.
 */
function validateOpenapi(document: unknown): Promise<{ valid: boolean; errors?: unknown; version: string }> {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    let text = '';
    for await (const chunk of process.stdin) text += chunk;
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(text));
    process.stdout.write(JSON.stringify({ ...result, version: validator.version }));
  `;
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
    child.stdin!.end(JSON.stringify(document));
  });
}

/**
 * The routes of one method, read from Fastify's route tree (its only public listing): a line is one
 * node, indented 4 characters a level, and a node's path continues its parent's (`/v1/x` then `s`).
 */
function servedRoutes(app: FastifyInstance, method: string): string[] {
  const routes: string[] = [];
  const prefixes: string[] = [];
  for (const line of app.printRoutes({ method, commonPrefix: false }).split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    prefixes.length = depth;
    const route = (prefixes[depth - 1] ?? '') + m[2];
    prefixes.push(route);
    if (m[3]?.split(', ').includes(method)) routes.push(route);
  }
  return routes.sort();
}

const SECRET = 'switch-secret-0123456789';

describe('GET /v1/openapi.json', () => {
  let ctx: TestContext;
  let agent: FastifyInstance;
  let url: string;
  let doc: Doc;
  const post = (route: string, body: unknown, token: string | null = SECRET) =>
    fetch(`${url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    ctx = await createTestContext({ RATING_TOKENS: `switch:agent:${SECRET}`, RECORD_BATCH_MAX: '250' });
    agent = await buildAgent(ctx);
    url = await agent.listen({ host: '127.0.0.1', port: 0 });
    const response = await fetch(`${url}/v1/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    doc = (await response.json()) as Doc;
  });

  afterAll(async () => {
    await agent?.close();
    await ctx?.destroy();
  });

  it('is served without a token, like /health, while the operations still need one', async () => {
    expect((await post('/v1/authorization', { account_tag: 'a', destination: '39' }, null)).status).toBe(401);
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('is a valid OpenAPI 3 document (and the validator does refuse a broken one)', async () => {
    expect(doc.openapi).toMatch(/^3\.[01]\.\d+$/);
    const result = await validateOpenapi(doc);
    expect(result).toMatchObject({ valid: true });
    const broken = { ...doc, paths: { '/v1/authorization': { post: { responses: { '200': { content: {} } } } } } };
    expect((await validateOpenapi(broken)).valid).toBe(false);
  });

  it('lists exactly the POST routes the agent serves under /v1', async () => {
    const served = servedRoutes(agent, 'POST').filter((route) => route.startsWith('/v1/'));
    const documented = Object.entries(doc.paths)
      .flatMap(([route, methods]) => Object.keys(methods).map((method) => `${method} ${route}`))
      .sort();
    expect(documented).toEqual(served.map((route) => `post ${route}`));
    expect(served).toHaveLength(6);
    for (const route of served) {
      // Each documented operation is there and checks its body: {} lacks a required field.
      const response = await post(route, {});
      expect({ route, status: response.status, code: ((await response.json()) as { error: { code: string } }).error.code }).toEqual({
        route,
        status: 400,
        code: 'BAD_USER_INPUT',
      });
    }
  });

  it('documents the 413 and 415 the operations answer (a body over the limit, a body that is not JSON)', async () => {
    const send = (contentType: string, body: string) =>
      fetch(`${url}/v1/authorization`, {
        method: 'POST',
        headers: { 'content-type': contentType, authorization: `Bearer ${SECRET}` },
        body,
      });
    const plain = await send('application/x-www-form-urlencoded', 'account_tag=a');
    expect(plain.status).toBe(415);
    expect(((await plain.json()) as { error: { code: string } }).error.code).toBe('BAD_USER_INPUT');
    const big = await send(
      'application/json',
      JSON.stringify({ account_tag: 'a', destination: '39', pad: 'x'.repeat(ctx.config.bodyLimitBytes) }),
    );
    expect(big.status).toBe(413);
    for (const [route, methods] of Object.entries(doc.paths))
      expect({ route, statuses: Object.keys(methods.post.responses) }).toEqual({ route, statuses: expect.arrayContaining(['413', '415']) });
  });

  it('describes every field of every operation, as the validation reads it', () => {
    const requestSchema = (operationId: string) => {
      const operation = Object.values(doc.paths).find((methods) => methods.post.operationId === operationId)!.post;
      const name = operation.requestBody.content['application/json'].schema.$ref.split('/').pop()!;
      return doc.components.schemas[name];
    };
    const operationIds = {
      authorization: 'authorization',
      begin: 'beginTransaction',
      end: 'endTransaction',
      record: 'recordTransaction',
      rollback: 'rollbackTransaction',
    };
    for (const [op, table] of Object.entries(operationFields)) {
      const schema = requestSchema(operationIds[op as keyof typeof operationIds]);
      expect({ op, fields: Object.keys(schema.properties) }).toEqual({ op, fields: Object.keys(table) });
      const required = Object.entries(table)
        .filter(([, spec]) => spec.presence === 'required')
        .map(([name]) => name);
      expect({ op, required: schema.required }).toEqual({ op, required });
      for (const [name, spec] of Object.entries(table)) expect(schema.properties[name].description).toContain(spec.description);
    }
    expect(requestSchema('recordTransactions').properties.transactions).toMatchObject({
      maxItems: 250,
      items: { $ref: '#/components/schemas/RecordTransactionRequest' },
    });
    expect(Object.keys(doc.components.schemas.TransactionAnswer.properties)).toEqual(Object.keys(operationAnswerFields));
    expect(Object.keys(doc.components.schemas.AuthorizationAnswer.properties)).toEqual(Object.keys(authorizationAnswerFields));
  });

  it('documents the 400 answer the agent gives', async () => {
    const response = await post('/v1/record_transaction', {
      transaction_tag: 't',
      account_tag: 'a',
      source: '1',
      destination: '39',
      timestamp_begin: 'yesterday',
      timestamp_end: '1763912350',
    });
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(response.status).toBe(400);
    const shape = doc.components.schemas.RequestError as unknown as {
      properties: { error: { properties: Record<string, unknown>; required: string[] } };
    };
    expect(Object.keys(body.error).sort()).toEqual(Object.keys(shape.properties.error.properties).sort());
    expect(body.error).toMatchObject({ code: 'BAD_USER_INPUT', field: 'timestamp_begin' });
  });
});
