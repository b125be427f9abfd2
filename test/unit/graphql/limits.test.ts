import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema, getIntrospectionQuery, isObjectType, parse, validate, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { agentModules } from '../../../src/agent/graphql/schema';
import { apiModules } from '../../../src/api/graphql/schema';
import { loadConfig } from '../../../src/shared/infra/config';
import {
  DEFAULT_LIST_SIZE,
  EMBEDDED_DIRECTIVE_TYPEDEFS,
  limitErrors,
  measureOperations,
  queryLimitsRule,
  type QueryLimits,
} from '../../../src/shared/infra/graphql/limits';
import { MAX_VARIABLES_DEPTH, withoutTypename } from '../../../src/shared/infra/http/graphql';

/** The query limits of src/shared/infra/graphql/limits.ts, on documents alone (no I/O). */

const schema = buildSchema(`
  ${EMBEDDED_DIRECTIVE_TYPEDEFS}
  type Version { name: String at: String items(perPage: Int): [Item!]! }
  type Item { id: ID! name: String children(perPage: Int): [Item!]! parent: Item tags: [String!]! versions: [Version!]! @embedded }
  type Query { items(perPage: Int, first: Int, filter: String): [Item!] item(id: ID): Item version: String }
  type Mutation { touch(id: ID!): Item }
`);
const apiSchema = buildSchema(apiModules.map((m) => m.typeDefs).join('\n'));
const agentSchema = buildSchema(
  agentModules({} as never)
    .map((m) => m.typeDefs)
    .join('\n'),
);

const config = loadConfig({});
const defaults: QueryLimits = { maxDepth: config.graphqlMaxDepth, maxFields: config.graphqlMaxFields, maxCost: config.graphqlMaxCost };

const measure = (query: string, s: GraphQLSchema = schema, request = {}) => measureOperations(s, parse(query), request)[0].measure;
const messages = (query: string, limits: QueryLimits = defaults, s: GraphQLSchema = schema, request = {}) =>
  validate(s, parse(query), [queryLimitsRule(limits, request)]).map((e) => e.message);

describe('depth', () => {
  it('counts the longest chain of fields, the leaf included', () => {
    expect(measure('{ version }')?.depth).toBe(1);
    expect(measure('{ items { id parent { parent { name } } } }')?.depth).toBe(4);
  });

  it('follows named fragment spreads and inline fragments (the bypass of issue 10)', () => {
    const levels = 30;
    const fragments = Array.from({ length: levels }, (_, i) =>
      i < levels - 1 ? `fragment A${i} on Item { parent { ...A${i + 1} } }` : `fragment A${i} on Item { id }`,
    );
    const query = `{ item { ...A0 } } ${fragments.join(' ')}`;
    expect(measure(query)?.depth).toBe(31);
    expect(messages(query)).toEqual([
      expect.stringMatching(/^Operation anonymous has depth 31, which exceeds the query depth limit of 12 \(GRAPHQL_MAX_DEPTH\)$/),
    ]);
    expect(measure('{ item { ... on Item { parent { ... { parent { id } } } } } }')?.depth).toBe(4);
  });

  it('counts introspection through fragments too, except the ofType chain', () => {
    const query =
      '{ __schema { types { ...T } } } fragment T on __Type { fields { type { ...U } } } fragment U on __Type { ofType { ofType { fields { name } } } }';
    expect(measure(query)?.depth).toBe(6);
    expect(messages(query, { ...defaults, maxDepth: 5 })).toEqual([
      expect.stringContaining('depth 6, which exceeds the query depth limit of 5'),
    ]);
  });

  it('stops at MAX_NESTING without overflowing the stack on long fragment chains', () => {
    const chain = Array.from({ length: 5000 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} }`).join(' ');
    const query = `{ ...F0 } ${chain} fragment F5000 on Query { version }`;
    expect(measure(query)).toBeNull();
    expect(messages(query)).toEqual([
      expect.stringContaining('more than 200 deep, which exceeds the query depth limit of 12 (GRAPHQL_MAX_DEPTH)'),
    ]);
  });

  it('survives fragment cycles (refused by graphql-js NoFragmentCyclesRule)', () => {
    expect(measure('{ item { ...A } } fragment A on Item { parent { ...B } } fragment B on Item { id ...A }')).toEqual({
      depth: 3,
      fields: 3,
      cost: 3,
    });
  });
});

describe('fields', () => {
  it('counts aliases and every use of a fragment', () => {
    expect(measure('{ a: version b: version c: version }')?.fields).toBe(3);
    expect(measure('{ a: item { ...F } b: item { ...F } } fragment F on Item { id name }')?.fields).toBe(6);
    const aliases = `{ ${Array.from({ length: 501 }, (_, i) => `a${i}: version`).join(' ')} }`;
    expect(messages(aliases)).toEqual([
      'Operation anonymous selects 501 fields, which exceeds the limit of 500 fields per document (GRAPHQL_MAX_FIELDS)',
    ]);
  });

  it('measures fragments spread exponentially in linear time', () => {
    const levels = 60;
    const fragments = Array.from(
      { length: levels },
      (_, i) => `fragment F${i} on Query { a: item { ...F${i + 1} } b: item { ...F${i + 1} } }`,
    ).join(' ');
    const query = `{ ...F0 } ${fragments} fragment F${levels} on Query { version }`;
    const started = Date.now();
    const errors = messages(query, { maxDepth: 100, maxFields: 500, maxCost: 200_000 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(errors.join('\n')).toMatch(/GRAPHQL_MAX_FIELDS/);
    expect(errors.join('\n')).toMatch(/estimated cost of more than 9007199254740991/);
  });
});

describe('cost', () => {
  it('is one per field, list selections times the list size', () => {
    expect(measure('{ version item { id name } }')?.cost).toBe(4);
    // A list without a size argument counts DEFAULT_LIST_SIZE items; a scalar list is one field.
    expect(measure('{ items { id tags } }')?.cost).toBe(1 + DEFAULT_LIST_SIZE * 2);
    expect(measure('{ items(perPage: 1000) { id } }')?.cost).toBe(1001);
    expect(measure('{ items(first: 10) { id children(perPage: 5) { id } } }')?.cost).toBe(1 + 10 * (1 + 1 + 5));
  });

  it('reads sizes given as variables from the request, else the variable default', () => {
    const query = 'query Q($n: Int = 40) { items(perPage: $n) { id } }';
    expect(measure(query)?.cost).toBe(41);
    expect(measure(query, schema, { variables: { n: 1000 } })?.cost).toBe(1001);
    expect(measure('query Q($n: Int) { items(perPage: $n) { id } }')?.cost).toBe(1 + DEFAULT_LIST_SIZE);
    // A size the resolver will refuse counts the default.
    expect(measure(query, schema, { variables: { n: 'x' } })?.cost).toBe(1 + DEFAULT_LIST_SIZE);
  });

  it('counts the selection of an @embedded list once: its values come with the parent document', () => {
    expect(measure('{ items(perPage: 1000) { id versions { name at } } }')?.cost).toBe(1 + 1000 * (1 + 1 + 2));
    // Lists of documents under an embedded list still count their size.
    expect(measure('{ items(perPage: 10) { versions { items(perPage: 5) { id } } } }')?.cost).toBe(1 + 10 * (1 + 1 + 5));
    // Every alias and every fragment use of it counts again.
    expect(measure('{ items(perPage: 10) { a: versions { name } b: versions { ...V } } } fragment V on Version { name at }')?.cost).toBe(
      1 + 10 * (2 + 3),
    );
  });

  it('marks as @embedded exactly the API lists that hold values of their parent (issue 32)', () => {
    const embedded = Object.values(apiSchema.getTypeMap())
      .filter((t): t is GraphQLObjectType => isObjectType(t) && !t.name.startsWith('__'))
      .flatMap((t) =>
        Object.values(t.getFields())
          .filter((f) => f.astNode?.directives?.some((d) => d.name.value === 'embedded'))
          .map((f) => `${t.name}.${f.name}`),
      );
    expect(embedded.sort()).toEqual([
      'Account.running_transactions',
      'Dashboard.accounts_below_threshold',
      'Dashboard.calls_per_minute',
      'Dashboard.queues',
      'Dashboard.revenue_per_hour',
      'PricelistRate.previous_versions',
      'ReratingPreview.accounts',
      'ReratingPreview.sample',
      'Transaction.reratings',
      'Transaction.segments',
    ]);
  });

  it('keeps lists read by a query of their own at their size: linked_accounts of linked_accounts on a page of 1000', () => {
    const query = '{ allAccounts(perPage: 1000) { id linked_accounts { id linked_accounts { id } } } }';
    expect(measure(query, apiSchema)?.cost).toBe(1 + 1000 * (1 + 1 + DEFAULT_LIST_SIZE * (1 + 1 + DEFAULT_LIST_SIZE)));
    expect(messages(query, defaults, apiSchema)).toEqual([expect.stringContaining('(GRAPHQL_MAX_COST)')]);
  });

  it('refuses the 1,000-alias query of issue 10, naming the limits', () => {
    const query = `{ ${Array.from({ length: 1000 }, (_, i) => `a${i}: allTransactions(perPage: 1000) { account { id } }`).join(' ')} }`;
    expect(measure(query, apiSchema)).toEqual({ depth: 3, fields: 3000, cost: 1000 * (1 + 1000 * 2) });
    expect(messages(query, defaults, apiSchema)).toEqual([
      'Operation anonymous selects 3000 fields, which exceeds the limit of 500 fields per document (GRAPHQL_MAX_FIELDS)',
      'Operation anonymous has an estimated cost of 2001000, which exceeds the query cost limit of 200000 (GRAPHQL_MAX_COST)',
    ]);
    // Under the field limit, the cost still stops it.
    const fewer = `{ ${Array.from({ length: 150 }, (_, i) => `a${i}: allTransactions(perPage: 1000) { account { id } }`).join(' ')} }`;
    expect(messages(fewer, defaults, apiSchema)).toEqual([expect.stringContaining('(GRAPHQL_MAX_COST)')]);
  });

  it('prices a field that scans records (reratingPreview) by its scan: aliased previews are refused', () => {
    const preview = (i: number) => `p${i}: reratingPreview(from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z") { records changed }`;
    expect(messages(`{ ${preview(0)} }`, defaults, apiSchema)).toEqual([]);
    const some = (n: number) => `{ ${Array.from({ length: n }, (_, i) => preview(i)).join(' ')} }`;
    expect(messages(some(4), defaults, apiSchema)).toEqual([]);
    expect(messages(some(5), defaults, apiSchema)).toEqual([expect.stringContaining('(GRAPHQL_MAX_COST)')]);
    expect(messages(`{ ${Array.from({ length: 10 }, (_, i) => preview(i)).join(' ')} }`, defaults, apiSchema)).toEqual([
      expect.stringContaining('(GRAPHQL_MAX_COST)'),
    ]);
  });

  it('counts introspection lists at their average size in the schema', () => {
    const types = Object.keys(apiSchema.getTypeMap()).length;
    expect(measure('{ __schema { types { name } } }', apiSchema)?.cost).toBe(2 + types);
    // Each `fields { type { ... } }` level multiplies by the average number of fields per type.
    const nested = `{ __schema { types { ${'fields { type { '.repeat(10)}name${' } }'.repeat(10)} } } }`;
    expect(messages(nested, { ...defaults, maxDepth: 100 }, apiSchema)).toEqual([expect.stringContaining('(GRAPHQL_MAX_COST)')]);
  });
});

describe('operations', () => {
  it('measures the operation named by operationName, else every one', () => {
    const query = 'query Small { version } query Big { items(perPage: 1000) { id name } }';
    expect(messages(query, { ...defaults, maxCost: 1000 }, schema, { operationName: 'Small' })).toEqual([]);
    expect(messages(query, { ...defaults, maxCost: 1000 })).toEqual([
      expect.stringContaining('Operation Big has an estimated cost of 2001'),
    ]);
    expect(limitErrors(schema, parse('mutation { touch(id: "1") { id } }'), defaults)).toEqual([]);
  });
});

describe('default limits', () => {
  const examples = (file: string, pattern: RegExp): string[] => {
    const text = readFileSync(path.join(__dirname, '..', '..', '..', 'docs', file), 'utf8');
    return [...text.matchAll(pattern)].map((m) => (JSON.parse(m[1]) as { query: string }).query);
  };

  it('let every documented query and the standard introspection query through', () => {
    const api = examples('API.md', /```json\n(.*?)\n```/gs);
    const agent = examples('AGENT.md', /-d '(\{"query".*?\})'/g);
    expect(api.length).toBeGreaterThanOrEqual(25);
    expect(agent.length).toBeGreaterThanOrEqual(1);
    for (const query of [...api, getIntrospectionQuery()])
      expect({ query, errors: messages(query, defaults, apiSchema) }).toEqual({ query, errors: [] });
    for (const query of [...agent, getIntrospectionQuery()])
      expect({ query, errors: messages(query, defaults, agentSchema) }).toEqual({ query, errors: [] });
  });

  it("let react-admin's export of 1000 accounts through, every field selected as ra-data-graphql-simple does (issue 32)", () => {
    // The document the unchanged provider sends for getList('Account', { perPage: 1000 }).
    const running =
      'transaction_tag source destination carrier_ip destination_rate in_progress inbound timestamp_begin timestamp_end __typename';
    const fields = `id account_tag type balance active max_concurrent_transactions name notification_email notification_mobile carrier_tags carrier_tags_override
      customer_tag linked_accounts { id __typename } pricelist_tags tags balance_alert_threshold running_transactions { ${running} }
      destination_rate { id __typename } least_cost_routing __typename`;
    const query = `query allAccounts($page: Int, $perPage: Int, $sortField: String, $sortOrder: String, $filter: AccountFilter) {
      items: allAccounts(page: $page, perPage: $perPage, sortField: $sortField, sortOrder: $sortOrder, filter: $filter) { ${fields} }
      total: _allAccountsMeta(page: $page, perPage: $perPage, filter: $filter) { count __typename } }`;
    const request = { operationName: 'allAccounts', variables: { page: 0, perPage: 1000, sortField: 'id', sortOrder: 'ASC', filter: {} } };
    // 17 fields, linked_accounts 1 + 25 x 2, running_transactions 1 + 10 (it was 1 + 25 x 10), destination_rate 3.
    expect(measure(query, apiSchema, request)?.cost).toBe(1 + 1000 * (17 + 51 + 11 + 3) + 3);
    expect(messages(query, defaults, apiSchema, request)).toEqual([]);
  });

  it('let a full page of 1000 transactions with their account through', () => {
    const fields =
      'id transaction_tag account_tag source destination source_ip carrier_ip tags timestamp_auth timestamp_begin timestamp_end duration fee inbound failed';
    const query = `{ allTransactions(perPage: 1000) { ${fields} account { id account_tag balance } } }`;
    expect(messages(query, defaults, apiSchema)).toEqual([]);
  });
});

describe('withoutTypename', () => {
  it('drops __typename members at every level', () => {
    expect(withoutTypename({ __typename: 'A', a: [{ __typename: 'B', b: 1 }], c: { __typename: 'C', d: null } })).toEqual({
      a: [{ b: 1 }],
      c: { d: null },
    });
  });

  it(`refuses variables nested more than ${MAX_VARIABLES_DEPTH} deep with a 400, without overflowing the stack`, () => {
    let nested: unknown = 1;
    for (let i = 0; i < 20_000; i++) nested = i % 2 ? { a: nested } : [nested];
    expect(() => withoutTypename(nested)).toThrow(
      expect.objectContaining({ statusCode: 400, message: `variables nest more than ${MAX_VARIABLES_DEPTH} levels deep` }),
    );
    let ok: unknown = 1;
    for (let i = 0; i < MAX_VARIABLES_DEPTH; i++) ok = { a: ok };
    expect(withoutTypename(ok)).toEqual(ok);
  });
});

describe('settings', () => {
  it('are read and checked once with the rest of the configuration', () => {
    expect(loadConfig({ GRAPHQL_MAX_FIELDS: '50', GRAPHQL_MAX_COST: '1000', MONGO_MAX_TIME_MS: '2500' })).toMatchObject({
      graphqlMaxFields: 50,
      graphqlMaxCost: 1000,
      mongoMaxTimeMs: 2500,
    });
    expect(() => loadConfig({ GRAPHQL_MAX_FIELDS: '0', GRAPHQL_MAX_COST: 'lots', MONGO_MAX_TIME_MS: '-1' })).toThrow(
      /GRAPHQL_MAX_FIELDS="0" must be an integer from 10 to 100000[\s\S]*GRAPHQL_MAX_COST="lots" must be an integer[\s\S]*MONGO_MAX_TIME_MS="-1" must be an integer/,
    );
  });
});
