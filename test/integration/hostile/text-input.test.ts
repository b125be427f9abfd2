import { callJobsSeen } from '../../support/call-slots';
import { readFileSync } from 'node:fs';
import type { Db } from 'mongodb';
import { expectError, startApi, type ApiHarness } from '../api/api-harness';
import { AgentHarness, startAgentHarness } from '../../support/agent-harness';
import { account, carrier, pricelist, rate, seed } from '../../support/seed';
import { importFile, summaryOf, tempFile } from '../import/support';

/**
 * Hostile text (controls, CR LF, C1, lone surrogates, padding) sent through every surface: the API,
 * the agent's GraphQL and REST operations, a recordTransactions batch and a CDR import. Each is
 * refused with BAD_USER_INPUT naming the field (a batch or import line: rejected with that reason)
 * and nothing changes. Values travel in JSON variables or bodies, where "\ud800" stays a lone
 * surrogate after JSON.parse (a GraphQL string literal could not carry one).
 */

const HOSTILE: Record<string, string> = {
  NUL: 'x\u0000y',
  ESC: 'x\u001b[2Jy',
  'CR LF': 'x\r\ny',
  'C1 U+0085': 'x\u0085y',
  'C1 U+009B': 'x\u009by',
  'lone high surrogate': 'x\ud800y',
  'lone low surrogate': 'x\udfffy',
  padded: ' xy ',
};

/** Written by the workers' periodic audit whatever the requests do. */
const BOOKKEEPING = new Set(['ledger_audits']);

/** Every document of every collection, in _id order: "nothing changed" is equality of two of these. */
async function snapshot(db: Db): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const c of await db.listCollections().toArray()) {
    if (BOOKKEEPING.has(c.name)) continue;
    out[c.name] = await db.collection(c.name).find({}).sort({ _id: 1 }).toArray();
  }
  return out;
}

/** `mutation($a: T, ...) { op(a: $a, ...) { selection } }` for the given argument types. */
function document(kind: 'query' | 'mutation', op: string, types: Record<string, string>, selection: string): string {
  const names = Object.keys(types);
  return `${kind}(${names.map((n) => `$${n}: ${types[n]}`).join(', ')}) { ${op}(${names.map((n) => `${n}: $${n}`).join(', ')}) { ${selection} } }`;
}

describe('hostile text through the management API', () => {
  let api: ApiHarness;

  beforeAll(async () => {
    api = await startApi();
    await api.ok('mutation { createCarrier(carrier_tag: "gw1", host: "10.0.0.1", port: 5060) { id } }');
    await api.ok('mutation { createPricelist(pricelist_tag: "retail", currency: USD) { id } }');
    await api.ok('mutation { createAccount(account_tag: "alice", balance: 1000, pricelist_tags: ["retail"]) { id } }');
    // What a lone surrogate would have become in BSON: a lookup with one must not reach this account.
    await api.ok('mutation($t: String) { createAccount(account_tag: $t, balance: 500) { id } }', { t: 'x\ufffdy' });
  });

  afterAll(() => api?.close());

  const accountArgs = {
    account_tag: 'String',
    name: 'String',
    notification_email: 'String',
    notification_mobile: 'String',
    customer_tag: 'String',
  };
  const listArgs = ['carrier_tags', 'carrier_tags_override', 'pricelist_tags', 'tags', 'linked_accounts'];

  it.each(Object.entries(HOSTILE))('refuses %s in every text field, naming it, and changes nothing', async (_what, value) => {
    const before = await snapshot(api.ctx.mongo.db);
    const attempts: Array<[string, string, Record<string, unknown>]> = [];
    for (const field of Object.keys(accountArgs)) {
      const types = { account_tag: 'String', [field]: 'String' };
      const vars = { account_tag: 'new-acc', [field]: value };
      attempts.push([field, document('mutation', 'createAccount', types, 'id'), vars]);
      if (field !== 'account_tag')
        attempts.push([field, document('mutation', 'updateAccount', types, 'id'), { ...vars, account_tag: 'alice' }]);
    }
    for (const field of listArgs) {
      attempts.push([
        field,
        document('mutation', 'updateAccount', { account_tag: 'String', [field]: '[String!]' }, 'id'),
        { account_tag: 'alice', [field]: ['retail', value] },
      ]);
    }
    attempts.push([
      'carrier_tag',
      document('mutation', 'createCarrier', { carrier_tag: 'String', host: 'String', port: 'Int' }, 'id'),
      { carrier_tag: value, host: '10.0.0.2', port: 5060 },
    ]);
    attempts.push([
      'host',
      document('mutation', 'createCarrier', { carrier_tag: 'String', host: 'String', port: 'Int' }, 'id'),
      { carrier_tag: 'gw2', host: value, port: 5060 },
    ]);
    attempts.push([
      'name',
      document('mutation', 'updatePricelist', { pricelist_tag: 'String', name: 'String' }, 'id'),
      { pricelist_tag: 'retail', name: value },
    ]);
    const rateTypes = { pricelist_tag: 'String', carrier_tag: 'String', prefix: 'String', rate: 'Int', description: 'String' };
    attempts.push([
      'prefix',
      document('mutation', 'createPricelistRate', rateTypes, 'id'),
      { pricelist_tag: 'retail', carrier_tag: 'gw1', prefix: value, rate: 1, description: null },
    ]);
    attempts.push([
      'description',
      document('mutation', 'createPricelistRate', rateTypes, 'id'),
      { pricelist_tag: 'retail', carrier_tag: 'gw1', prefix: '44', rate: 1, description: value },
    ]);
    for (const field of ['transaction_tag', 'source', 'destination', 'source_ip', 'carrier_ip', 'unauthorized_reason']) {
      const types = { transaction_tag: 'String', account_tag: 'String', [field]: 'String' };
      attempts.push([
        field,
        document('mutation', 'createTransaction', types, 'id'),
        { transaction_tag: 'cdr-1', account_tag: 'alice', [field]: value },
      ]);
    }
    attempts.push([
      'tags',
      document('mutation', 'createTransaction', { transaction_tag: 'String', account_tag: 'String', tags: '[String!]' }, 'id'),
      { transaction_tag: 'cdr-1', account_tag: 'alice', tags: [value] },
    ]);
    attempts.push([
      'destination',
      document('query', 'leastCostRouting', { destination: 'String', pricelist_tags: '[String!]' }, '').replace(' {  }', ''),
      { destination: value, pricelist_tags: ['retail'] },
    ]);

    for (const [field, query, variables] of attempts) {
      const answer = await api.gql(query, variables);
      expect({ field, query, status: answer.status < 500 }).toEqual({ field, query, status: true });
      expect({ field, query, code: answer.body.errors?.[0]?.extensions?.code, named: answer.body.errors?.[0]?.extensions?.field }).toEqual({
        field,
        query,
        code: 'BAD_USER_INPUT',
        named: field,
      });
    }
    expect(await snapshot(api.ctx.mongo.db)).toEqual(before);
  });

  it('refuses a lookup holding a lone surrogate instead of matching the U+FFFD it would become', async () => {
    const before = await snapshot(api.ctx.mongo.db);
    expectError(
      await api.gql('mutation($t: String) { deleteAccount(account_tag: $t) { id } }', { t: 'x\ud800y' }),
      'BAD_USER_INPUT',
      'account_tag',
    );
    expectError(
      await api.gql('mutation($t: String!) { incrementAccountBalance(account_tag: $t, amount: 1) { balance } }', { t: 'x\ud800y' }),
      'BAD_USER_INPUT',
      'account_tag',
    );
    expect(await snapshot(api.ctx.mongo.db)).toEqual(before);
  });

  it('still accepts ordinary non-ASCII text', async () => {
    const data = await api.ok('mutation($n: String) { updateAccount(account_tag: "alice", name: $n) { name } }', { n: 'Zoë Ünal 😀 東京' });
    expect(data.updateAccount.name).toBe('Zoë Ünal 😀 東京');
  });
});

describe('hostile text through the agent (GraphQL, REST, recordTransactions) and the CDR import', () => {
  let h: AgentHarness;

  beforeAll(async () => {
    h = await startAgentHarness(1);
    await seed(h.ctx, {
      carriers: [carrier('c1', { host: '10.0.0.1', port: 5060 })],
      pricelists: [pricelist('pl')],
      // fee = duration in seconds: charges are easy to total
      rates: [rate('pl', 'c1', '49', { rate: 60, rate_increment: 1 })],
      accounts: [
        account('alice', { balance: 10_000n, pricelist_tags: ['pl'] }),
        account('bob', { balance: 10_000n, pricelist_tags: ['pl'] }),
        account('x\ufffdy', { balance: 10_000n, pricelist_tags: ['pl'] }),
      ],
    });
  });

  afterAll(() => h?.close());

  const good = {
    transaction_tag: 'call-1',
    account_tag: 'alice',
    source: '4930111',
    destination: '4930222',
    source_ip: '192.0.2.1',
    carrier_ip: '10.0.0.1:5060',
    tags: ['night'],
    destination_account_tag: 'bob',
    timestamp_begin: '2026-01-01T12:00:00Z',
    timestamp_end: '2026-01-01T12:00:38Z',
  };
  const callTypes: Record<string, string> = {
    transaction_tag: 'String!',
    account_tag: 'String!',
    source: 'String!',
    destination: 'String!',
    source_ip: 'String',
    carrier_ip: 'String',
    tags: '[String!]',
    destination_account_tag: 'String',
    timestamp_begin: 'String!',
  };
  const ops: Array<{ op: string; rest: string; types: Record<string, string>; fields: string[]; selection?: string; kind?: 'query' }> = [
    {
      op: 'beginTransaction',
      rest: '/v1/begin_transaction',
      types: { ...callTypes, timestamp_begin: 'String' },
      fields: Object.keys(callTypes).filter((f) => f !== 'timestamp_begin'),
    },
    {
      op: 'recordTransaction',
      rest: '/v1/record_transaction',
      types: { ...callTypes, timestamp_end: 'String!' },
      fields: Object.keys(callTypes).filter((f) => f !== 'timestamp_begin'),
    },
    {
      op: 'endTransaction',
      rest: '/v1/end_transaction',
      types: { transaction_tag: 'String!', account_tag: 'String!' },
      fields: ['transaction_tag', 'account_tag'],
    },
    {
      op: 'rollbackTransaction',
      rest: '/v1/rollback_transaction',
      types: { transaction_tag: 'String!', account_tag: 'String!' },
      fields: ['transaction_tag', 'account_tag'],
    },
    {
      op: 'authorization',
      rest: '/v1/authorization',
      kind: 'query',
      selection: 'authorized',
      types: {
        transaction_tag: 'String',
        account_tag: 'String!',
        destination_account_tag: 'String',
        source: 'String',
        destination: 'String!',
      },
      fields: ['transaction_tag', 'account_tag', 'destination_account_tag', 'source', 'destination'],
    },
  ];

  it.each(Object.entries(HOSTILE))(
    'GraphQL and REST refuse %s in every field of every operation, naming it, and change nothing',
    async (_what, value) => {
      const before = await snapshot(h.ctx.mongo.db);
      const jobsBefore = await callJobsSeen(h.ctx);
      for (const { op, rest, types, fields, selection, kind } of ops) {
        const vars = Object.fromEntries(Object.keys(types).map((k) => [k, good[k as keyof typeof good]]));
        for (const field of fields) {
          const variables = { ...vars, [field]: field === 'tags' ? ['ok', value] : value };
          const gql = await h.gql(document(kind ?? 'mutation', op, types, selection ?? 'ok reason'), variables);
          const error = gql.body.errors?.[0] as { extensions?: { code?: string; field?: string } } | undefined;
          expect({ op, field, status: gql.status < 500, code: error?.extensions?.code, named: error?.extensions?.field }).toEqual({
            op,
            field,
            status: true,
            code: 'BAD_USER_INPUT',
            named: field,
          });
          const answer = await h.rest<{ error?: { code: string; field: string; message: string } }>(rest, variables);
          expect({ op, field, status: answer.status, error: answer.body.error }).toEqual({
            op,
            field,
            status: 400,
            error: { code: 'BAD_USER_INPUT', field, message: expect.stringMatching(new RegExp(`^${field}: `)) },
          });
        }
      }
      // Refused before anything was enqueued, and nothing stored.
      const jobsAfter = await callJobsSeen(h.ctx);
      expect({ waiting: jobsAfter.waiting, answered: [...jobsAfter.answered].filter((id) => !jobsBefore.answered.has(id)) }).toEqual({
        waiting: 0,
        answered: [],
      });
      expect(await snapshot(h.ctx.mongo.db)).toEqual(before);
    },
  );

  it('refuses tags the API would refuse (200 characters, padded), as the API does', async () => {
    const before = await snapshot(h.ctx.mongo.db);
    for (const tags of [['t'.repeat(200)], ['  vip  ']]) {
      const answer = await h.rest<{ error?: { field: string } }>('/v1/record_transaction', { ...good, tags });
      expect(answer.status).toBe(400);
      expect(answer.body.error?.field).toBe('tags');
    }
    expect(await snapshot(h.ctx.mongo.db)).toEqual(before);
  });

  const batch = `mutation($t: [RecordInput!]!) { recordTransactions(transactions: $t) { index transaction_tag ok reason } }`;

  it('recordTransactions rejects each hostile item with its field, records the good one only', async () => {
    const fields = [
      'transaction_tag',
      'account_tag',
      'source',
      'destination',
      'source_ip',
      'carrier_ip',
      'tags',
      'destination_account_tag',
    ];
    const items: Array<Record<string, unknown>> = [{ ...good, transaction_tag: 'batch-good', timestamp_end: '2026-01-01T12:00:10Z' }];
    const expected: string[] = [];
    for (const value of Object.values(HOSTILE)) {
      for (const field of fields) {
        items.push({ ...good, transaction_tag: `b-${items.length}`, [field]: field === 'tags' ? [value] : value });
        expected.push(field);
      }
    }
    const balanceBefore = (await h.ctx.mongo.collections.accounts.findOne({ account_tag: 'alice' }))!.balance;
    const recordsBefore = await h.ctx.mongo.collections.transactions.countDocuments({});
    // RECORD_BATCH_MAX is 1000 by default: one request, GraphQL; the REST mirror gets the same items.
    const gql = await h.gql(batch, { t: items });
    expect(gql.body.errors).toBeUndefined();
    const results = (gql.body.data as { recordTransactions: Array<{ ok: boolean; reason: string | null }> }).recordTransactions;
    expect(results[0]).toMatchObject({ ok: true, reason: null });
    expected.forEach((field, i) =>
      expect({ i, reason: results[i + 1].reason }).toEqual({ i, reason: expect.stringMatching(new RegExp(`^BAD_USER_INPUT: ${field}: `)) }),
    );

    const rest = await h.rest<{ results: Array<{ ok: boolean; reason: string | null }> }>('/v1/record_transactions', {
      transactions: items.slice(1),
    });
    expect(rest.status).toBe(200);
    expected.forEach((field, i) =>
      expect({ i, reason: rest.body.results[i].reason }).toEqual({
        i,
        reason: expect.stringMatching(new RegExp(`^BAD_USER_INPUT: ${field}: `)),
      }),
    );

    // Only the good call: 10 s at 1 per second, and its caller's and receiver's records.
    expect((await h.ctx.mongo.collections.accounts.findOne({ account_tag: 'alice' }))!.balance).toBe(balanceBefore - 10n);
    expect(await h.ctx.mongo.collections.transactions.countDocuments({})).toBe(recordsBefore + 2);
    expect((await h.ctx.mongo.collections.accounts.findOne({ account_tag: 'x\ufffdy' }))!.balance).toBe(10_000n);
  });

  it('the CDR import rejects hostile CSV and JSON lines with their field and charges only the good ones', async () => {
    const header = 'transaction_tag,account_tag,source,destination,timestamp_begin,timestamp_end,source_ip,carrier_ip,tags';
    const line = (tag: string, cells: Partial<Record<string, string>> = {}) => {
      const row = {
        transaction_tag: tag,
        account_tag: 'bob',
        source: '4930111',
        destination: '4930222',
        timestamp_begin: '2026-01-02T12:00:00Z',
        timestamp_end: '2026-01-02T12:00:05Z',
        source_ip: '',
        carrier_ip: '',
        tags: '',
        ...cells,
      };
      return header
        .split(',')
        .map((c) => `"${row[c as keyof typeof row]!.replace(/"/g, '""')}"`)
        .join(',');
    };
    // Lone surrogates cannot be written in a UTF-8 file: they are tested through JSON lines below.
    const hostile = ['x\u0000y', 'x\u001b[2Jy', 'x\r\ny', 'x\u0085y', 'x\u009by'];
    const fields = ['transaction_tag', 'account_tag', 'source', 'destination', 'source_ip', 'carrier_ip', 'tags'];
    const lines = [line('csv-good')];
    const expected: string[] = [];
    for (const value of hostile) {
      for (const field of fields) {
        expected.push(field);
        lines.push(line(`csv-${lines.length}`, { [field]: value }));
      }
    }
    const file = tempFile('hostile.csv', `${header}\n${lines.join('\n')}\n`);
    const before = (await h.ctx.mongo.collections.accounts.findOne({ account_tag: 'bob' }))!.balance;

    const { code, output } = await importFile(h.ctx, [file, '--no-progress']);
    expect(code).toBe(1);
    expect(summaryOf(output).rejected).toBe(
      `${hostile.length * fields.length} (invalid ${hostile.length * fields.length}, refused 0) -> ${file}.rejects.csv`,
    );
    const reasons = readFileSync(`${file}.rejects.csv`, 'utf8').match(/^\d+,"?BAD_USER_INPUT: [a-z_]+: /gm) ?? [];
    expect(reasons.map((r) => r.replace(/^\d+,"?BAD_USER_INPUT: /, '').replace(/: $/, '')).sort()).toEqual(expected.sort());
    expect((await h.ctx.mongo.collections.accounts.findOne({ account_tag: 'bob' }))!.balance).toBe(before - 5n);

    const jsonl = [
      JSON.stringify({
        ...good,
        transaction_tag: 'json-good',
        account_tag: 'bob',
        destination_account_tag: undefined,
        timestamp_end: '2026-01-01T12:00:07Z',
      }),
      ...fields.map((field, i) =>
        JSON.stringify({
          ...good,
          transaction_tag: `json-${i}`,
          account_tag: 'bob',
          destination_account_tag: undefined,
          [field]: field === 'tags' ? ['x\ud800'] : 'x\udc00y',
        }),
      ),
      JSON.stringify({ ...good, transaction_tag: 'json-fffd', account_tag: 'x\ud800y', destination_account_tag: undefined }),
    ];
    // JSON.stringify writes lone surrogates as \u escapes: the file is valid UTF-8, JSON.parse restores them.
    expect(jsonl.join('\n')).toContain('\\ud800');
    const jsonFile = tempFile('hostile.jsonl', `${jsonl.join('\n')}\n`);
    const run = await importFile(h.ctx, [jsonFile, '--no-progress']);
    expect(run.code).toBe(1);
    expect(summaryOf(run.output).rejected).toMatch(new RegExp(`^${fields.length + 1} \\(invalid ${fields.length + 1}, refused 0\\)`));
    const jsonReasons = readFileSync(`${jsonFile}.rejects.csv`, 'utf8').match(/^\d+,"?BAD_USER_INPUT: [a-z_]+: /gm) ?? [];
    expect(jsonReasons.map((r) => r.replace(/^\d+,"?BAD_USER_INPUT: /, '').replace(/: $/, '')).sort()).toEqual(
      [...fields, 'account_tag'].sort(),
    );
    expect((await h.ctx.mongo.collections.accounts.findOne({ account_tag: 'bob' }))!.balance).toBe(before - 5n - 7n);
    expect((await h.ctx.mongo.collections.accounts.findOne({ account_tag: 'x\ufffdy' }))!.balance).toBe(10_000n);
  });
});
