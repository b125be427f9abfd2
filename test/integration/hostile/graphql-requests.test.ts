import type { FastifyInstance } from 'fastify';
import { getIntrospectionQuery } from 'graphql';
import { Collection } from 'mongodb';
import { buildAgent } from '../../../src/agent/app';
import { buildApi } from '../../../src/api/app';
import { createTestContext, TestContext } from '../../support/harness';

/**
 * Issue 10, items 1 and 3: malformed requests and over-limit documents answer HTTP 400 with the
 * error shape of docs/DESIGN.md section 5 and a clear code, never a 500, on both GraphQL endpoints (the
 * API and the agent), and change nothing (every collection and every queue key compared).
 */

interface Endpoint {
  name: 'api' | 'agent';
  /** A mutation that would change something if it ran. */
  mutation: string;
  /** A document with a required String variable `$t`. */
  withVariable: string;
  /** GRAPHQL_MAX_COST for the test: under the cost of 40 nested introspection queries, over the standard one. */
  maxCost: number;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: 'api',
    mutation: 'mutation { createCarrier(carrier_tag: "hostile", host: "10.0.0.1", port: 5060) { id } }',
    withVariable: 'mutation ($t: String!) { createCarrier(carrier_tag: $t, host: "10.0.0.1", port: 5060) { id } }',
    maxCost: 40000,
  },
  {
    name: 'agent',
    mutation: 'mutation { beginTransaction(transaction_tag: "hostile", account_tag: "acc", source: "1", destination: "2") { ok } }',
    withVariable:
      'mutation ($t: String!) { beginTransaction(transaction_tag: $t, account_tag: "acc", source: "1", destination: "2") { ok } }',
    maxCost: 10000,
  },
];

interface Answer {
  status: number;
  body: { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string; field?: string } }> };
}

/** Status 400, no data, one or more errors in the documented shape, the first with `code`. */
function expect400(answer: Answer, code: string, message?: RegExp): void {
  const summary = { status: answer.status, code: answer.body.errors?.[0]?.extensions?.code };
  expect({ summary, body: answer.body }).toMatchObject({ summary: { status: 400, code } });
  expect(answer.body.data ?? null).toBeNull();
  for (const error of answer.body.errors ?? []) {
    expect(typeof error.message).toBe('string');
    expect(error.message).not.toBe('Internal server error');
    expect(typeof error.extensions?.code).toBe('string');
  }
  if (message) expect(answer.body.errors!.map((e) => e.message).join('\n')).toMatch(message);
}

describe.each(ENDPOINTS)('hostile GraphQL requests: $name', (endpoint) => {
  let ctx: TestContext;
  let app: FastifyInstance;
  let url: string;
  let before: unknown;

  beforeAll(async () => {
    // Small limits so that over-limit documents stay small; defaults are tested in unit tests.
    ctx = await createTestContext({
      GRAPHQL_MAX_DEPTH: '6',
      GRAPHQL_MAX_FIELDS: '250',
      GRAPHQL_MAX_COST: String(endpoint.maxCost),
      MONGO_MAX_TIME_MS: '4321',
    });
    app = endpoint.name === 'api' ? await buildApi(ctx) : await buildAgent(ctx);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.destroy();
  });

  /** Every document of every collection, and every Redis key of this test's queues. */
  const snapshot = async () => {
    const collections = await ctx.mongo.db.listCollections().toArray();
    const documents: Record<string, unknown[]> = {};
    for (const { name } of collections.sort((a, b) => a.name.localeCompare(b.name))) {
      documents[name] = await ctx.mongo.db.collection(name).find().sort({ _id: 1 }).toArray();
    }
    // The rate limiter counts every request, refused ones included: not a state change of the service.
    const keys = (await ctx.redis.keys(`${ctx.config.queuePrefix}:*`)).filter((k) => !k.includes(':rate-limit:')).sort();
    return { documents, keys };
  };

  beforeEach(async () => {
    before = await snapshot();
  });

  afterEach(async () => {
    expect(await snapshot()).toEqual(before);
  });

  const post = async (body: string, contentType = 'application/json'): Promise<Answer> => {
    const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': contentType }, body });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  };
  const postJson = (body: unknown) => post(JSON.stringify(body));
  const get = async (params: Record<string, string>): Promise<Answer> => {
    const response = await fetch(`${url}/graphql?${new URLSearchParams(params).toString()}`);
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  };

  describe('malformed requests', () => {
    it('a body that is not JSON, or not an object', async () => {
      for (const body of ['not json', '{"query": ', '[]', '42', '"{ version }"', 'null']) {
        expect400(await post(body), 'BAD_REQUEST');
      }
      expect400(await post('{ version }', 'text/plain'), 'BAD_REQUEST');
    });

    it('a query member that is not a string', async () => {
      for (const query of [{ kind: 'Document', definitions: [] }, ['{ version }'], 1, null, true]) {
        expect400(await postJson({ query }), 'BAD_REQUEST', /query must be a string/);
      }
    });

    it('a query string that is JSON, not GraphQL', async () => {
      const ast = JSON.stringify({ kind: 'Document', definitions: [{ kind: 'OperationDefinition', operation: 'query' }] });
      for (const query of ['{}', '1', 'null', '[]', '"x"', 'true', ast, '  { "a": 1 }  ']) {
        expect400(await postJson({ query }), 'GRAPHQL_PARSE_FAILED', /^Syntax Error/);
      }
    });

    it('an empty or blank query string', async () => {
      for (const query of ['', '   ', '# only a comment']) {
        const answer = await postJson({ query });
        expect(answer.status).toBe(400);
        expect(['BAD_REQUEST', 'GRAPHQL_PARSE_FAILED']).toContain(answer.body.errors?.[0]?.extensions?.code);
      }
    });

    it('a subscription operation', async () => {
      expect400(await postJson({ query: 'subscription { version }' }), 'BAD_REQUEST', /subscription/);
      expect400(await postJson({ query: 'subscription { version }', variables: {} }), 'BAD_REQUEST', /subscription/);
    });

    it('an unknown operationName', async () => {
      const query = `query A { version } ${endpoint.mutation.replace('mutation', 'mutation B')}`;
      expect400(await postJson({ query, operationName: 'C' }), 'BAD_REQUEST', /Unknown operation named "C"/);
      expect400(await postJson({ query, operationName: 'C', variables: {} }), 'BAD_REQUEST', /Unknown operation named "C"/);
      expect400(await postJson({ query: '{ version }', operationName: 'C' }), 'BAD_REQUEST', /Unknown operation/);
    });

    it('an operationName or variables of the wrong JSON type', async () => {
      // Fastify turns a number into a string: an unknown operation.
      expect400(await postJson({ query: '{ version }', operationName: 5 }), 'BAD_REQUEST', /Unknown operation named "5"/);
      expect400(await postJson({ query: '{ version }', operationName: { a: 1 } }), 'BAD_REQUEST', /operationName must be/);
      expect400(await postJson({ query: '{ version }', variables: 'x' }), 'BAD_REQUEST', /variables must be object/);
      expect400(await postJson({ query: '{ version }', variables: [1] }), 'BAD_REQUEST', /variables must be object/);
    });

    it('two operations without a name and no operationName', async () => {
      const query = `{ version } ${endpoint.mutation}`;
      expect400(await postJson({ query }), 'GRAPHQL_VALIDATION_FAILED', /anonymous operation/);
      const named = `query A { version } ${endpoint.mutation.replace('mutation', 'mutation B')}`;
      expect400(await postJson({ query: named }), 'BAD_REQUEST', /Must provide operation name/);
      expect400(await postJson({ query: named, variables: {} }), 'BAD_REQUEST', /Must provide operation name/);
    });

    it('a required variable not supplied, or null', async () => {
      for (const body of [{}, { variables: {} }, { variables: null }, { variables: { t: null } }]) {
        const answer = await postJson({ query: endpoint.withVariable, ...body });
        expect400(answer, 'BAD_USER_INPUT', /^Variable "\$t"/);
        expect(answer.body.errors![0].extensions?.field).toBe('t');
      }
    });

    it('variables of the wrong type', async () => {
      for (const t of [5, true, { a: 1 }, ['x']]) {
        const answer = await postJson({ query: endpoint.withVariable, variables: { t } });
        expect400(answer, 'BAD_USER_INPUT', /^Variable "\$t" got invalid value/);
        expect(answer.body.errors![0].extensions?.field).toBe('t');
      }
    });

    it('deeply nested variables', async () => {
      for (const depth of [33, 20_000]) {
        const nested = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
        const body = `{"query":${JSON.stringify(endpoint.withVariable)},"variables":{"t":${nested}}}`;
        expect400(await post(body), 'BAD_REQUEST', /variables nest more than 32 levels/);
        const array = `${'['.repeat(depth)}${']'.repeat(depth)}`;
        expect400(await post(`{"query":${JSON.stringify(endpoint.withVariable)},"variables":{"t":${array}}}`), 'BAD_REQUEST');
      }
    });

    it('a deeply nested document', async () => {
      const deep = `{ ${'version { '.repeat(5000)}${' }'.repeat(5000)} }`;
      const answer = await postJson({ query: deep });
      expect(answer.status).toBe(400);
      expect(answer.body.errors![0].extensions?.code).toMatch(/^GRAPHQL_(PARSE|VALIDATION)_FAILED$/);
    });

    it('GET with bad parameters', async () => {
      expect400(await get({}), 'BAD_REQUEST');
      for (const query of ['{}', '1', 'null', '[]']) expect400(await get({ query }), 'GRAPHQL_PARSE_FAILED');
      expect400(await get({ query: '{ version' }), 'GRAPHQL_PARSE_FAILED');
      expect400(await get({ query: '{ version }', variables: 'not json' }), 'BAD_REQUEST', /variables must be a JSON object/);
      expect400(await get({ query: '{ version }', variables: '[1]' }), 'BAD_REQUEST', /variables must be a JSON object/);
      const nested = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
      const tooDeep = await fetch(`${url}/graphql?query=${encodeURIComponent('{ version }')}&variables=${encodeURIComponent(nested)}`);
      expect(tooDeep.status).toBeGreaterThanOrEqual(400);
      expect(tooDeep.status).toBeLessThan(500);
      expect400(
        await get({ query: 'query A { version } query B { version }', operationName: 'C' }),
        'BAD_REQUEST',
        /Unknown operation named "C"/,
      );
      expect400(await get({ query: 'query A { version } query B { version }' }), 'BAD_REQUEST', /Must provide operation name/);
      // Like a mutation, a subscription is not a query: not allowed over GET.
      expect((await get({ query: 'subscription { version }' })).status).toBe(405);
      expect400(await get({ query: 'query ($t: String!) { __type(name: $t) { name } }' }), 'BAD_USER_INPUT', /^Variable "\$t"/);
      const mutation = await get({ query: endpoint.mutation });
      expect(mutation.status).toBe(405);
      expect(await get({ query: '{ version }' })).toMatchObject({ status: 200, body: { data: { version: expect.any(String) } } });
    });
  });

  describe('query limits', () => {
    it('counts depth through named fragments', async () => {
      // 30 levels through spreads of fragments on the introspection types (each adds one field).
      const levels = 30;
      const fragments = Array.from({ length: levels }, (_, i) =>
        i < levels - 1
          ? `fragment A${i} on __Type { ofType { name } fields { type { ...A${i + 1} } } }`
          : `fragment A${i} on __Type { name }`,
      ).join('\n');
      const answer = await postJson({ query: `{ __schema { types { ...A0 } } }\n${fragments}` });
      expect400(answer, 'GRAPHQL_VALIDATION_FAILED', /exceeds the query depth limit of 6 \(GRAPHQL_MAX_DEPTH\)/);
      const plain = await postJson({
        query: `{ __type(name: "Query") { ...B } } fragment B on __Type { fields { type { ...C } } } fragment C on __Type { fields { type { fields { name } } } }`,
      });
      expect400(plain, 'GRAPHQL_VALIDATION_FAILED', /depth 7, which exceeds the query depth limit of 6/);
    });

    it('limits the number of fields, aliases included', async () => {
      const aliases = Array.from({ length: 251 }, (_, i) => `a${i}: version`).join(' ');
      expect400(
        await postJson({ query: `{ ${aliases} }` }),
        'GRAPHQL_VALIDATION_FAILED',
        /selects 251 fields, which exceeds the limit of 250 fields per document \(GRAPHQL_MAX_FIELDS\)/,
      );
      // Fragments count once per use.
      const spread = Array.from({ length: 126 }, (_, i) => `b${i}: __typename ...F`).join(' ');
      expect400(
        await postJson({ query: `{ ${spread} } fragment F on Query { version }` }),
        'GRAPHQL_VALIDATION_FAILED',
        /GRAPHQL_MAX_FIELDS/,
      );
    });

    it('estimates cost with list sizes, from literals and from variables', async () => {
      const nested = `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: __schema { types { fields { type { fields { name } } } } }`).join(' ')} }`;
      const limit = new RegExp(`estimated cost of \\d+, which exceeds the query cost limit of ${endpoint.maxCost} \\(GRAPHQL_MAX_COST\\)`);
      expect400(await postJson({ query: nested }), 'GRAPHQL_VALIDATION_FAILED', limit);
      if (endpoint.name !== 'api') return;
      const list = 'query ($n: Int) { allTransactions(perPage: $n) { id account { id account_tag } } }';
      expect((await postJson({ query: list, variables: { n: 1000 } })).status).toBe(200);
      // The same document again (cached by Mercurius) with a larger page: the cost is checked again.
      const many = `query ($n: Int) { ${Array.from({ length: 20 }, (_, i) => `t${i}: allTransactions(perPage: $n) { id account { id account_tag } }`).join(' ')} }`;
      expect((await postJson({ query: many, variables: { n: 10 } })).status).toBe(200);
      expect400(await postJson({ query: many, variables: { n: 1000 } }), 'GRAPHQL_VALIDATION_FAILED', /GRAPHQL_MAX_COST/);
      expect400(
        await postJson({ query: many.replace(/\$n\)/g, '1000)').replace('($n: Int) ', '') }),
        'GRAPHQL_VALIDATION_FAILED',
        /GRAPHQL_MAX_COST/,
      );
    });

    it('refuses the 1,000-alias query of the issue before any resolver runs', async () => {
      const field = endpoint.name === 'api' ? 'allTransactions(perPage: 1000) { account { id } }' : 'version';
      const query = `{ ${Array.from({ length: 1000 }, (_, i) => `a${i}: ${field}`).join(' ')} }`;
      const started = Date.now();
      expect400(await postJson({ query }), 'GRAPHQL_VALIDATION_FAILED', /GRAPHQL_MAX_FIELDS|GRAPHQL_MAX_COST/);
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it("gives the API's list and count queries a server-side time limit (MONGO_MAX_TIME_MS)", async () => {
      if (endpoint.name !== 'api') return;
      const find = jest.spyOn(Collection.prototype, 'find');
      const count = jest.spyOn(Collection.prototype, 'countDocuments');
      try {
        for (const [list, meta] of [
          ['allCarriers', '_allCarriersMeta'],
          ['allPricelists', '_allPricelistsMeta'],
          ['allPricelistRates', '_allPricelistRatesMeta'],
          ['allAccounts', '_allAccountsMeta'],
          ['allTransactions', '_allTransactionsMeta'],
        ]) {
          find.mockClear();
          count.mockClear();
          const answer = await postJson({ query: `{ ${list} { id } ${meta} { count } }` });
          expect({ list, answer }).toMatchObject({ list, answer: { status: 200, body: { data: { [list]: [], [meta]: { count: 0 } } } } });
          expect({ list, options: find.mock.calls.map((c) => c[1]) }).toEqual({
            list,
            options: [expect.objectContaining({ maxTimeMS: 4321 })],
          });
          expect({ meta, options: count.mock.calls.map((c) => c[1]) }).toEqual({
            meta,
            options: [expect.objectContaining({ maxTimeMS: 4321 })],
          });
        }
      } finally {
        find.mockRestore();
        count.mockRestore();
      }
    });

    it('lets the standard introspection query through', async () => {
      const answer = await postJson({ query: getIntrospectionQuery() });
      expect(answer.status).toBe(200);
      expect(answer.body.errors).toBeUndefined();
    });
  });
});
