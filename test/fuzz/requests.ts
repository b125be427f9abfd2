/**
 * The fuzz test's table of valid requests (test/fuzz/README.md): every agent operation on its GraphQL
 * endpoint and its REST mirror, and the management API's queries and mutations for every resource,
 * each with the kind of every field it takes. The mutators (mutators.ts) break these; sent unchanged
 * (the control run, after the state check) each must succeed on the data that seed() writes.
 */

export type Surface = 'api' | 'agent-gql' | 'agent-rest';
export const SURFACES: readonly Surface[] = ['api', 'agent-gql', 'agent-rest'];

/**
 * What a field holds, which decides the values that must be refused (mutators.ts):
 * tag, number, address, ... as docs/API.md "Validation limits"; `time` an agent timestamp string,
 * `datetime` the API's DateTime scalar; `lookup` a value that only names a record (a query may answer
 * null for a strange one, a mutation must fail); `object`/`list` an input object or list of them.
 */
export type Kind =
  | 'tag'
  | 'tags'
  | 'number'
  | 'address'
  | 'host'
  | 'email'
  | 'mobile'
  | 'text'
  | 'description'
  | 'prefix'
  | 'time'
  | 'datetime'
  | 'id'
  | 'lookup'
  | 'int'
  | 'uint'
  | 'port'
  | 'perPage'
  | 'bigint'
  | 'bool'
  | 'enum'
  | 'sortField'
  | 'sortOrder'
  | 'object'
  | 'list';

export interface Field {
  /** Argument name, or a path into one: `destination_rate.prefix`, `transactions.*.source` (every item). */
  path: string;
  /** GraphQL type of a top-level argument (its variable's declared type); '' for nested fields. */
  gqlType: string;
  kind: Kind;
  /** Must be present: removing it or sending null must be refused. */
  required: boolean;
}

export interface Base {
  surface: Surface;
  /** Operation label, e.g. `createCarrier` or `begin`. */
  name: string;
  op: 'query' | 'mutation';
  /** GraphQL root field. */
  field: string;
  /** GraphQL selection set ('' for a scalar result). */
  selection: string;
  /** HTTP path: /graphql, or the REST route. */
  path: string;
  /** The valid arguments (the REST body). */
  args: Record<string, unknown>;
  fields: Field[];
}

/** `name:GraphQLType:kind`, a trailing `!` on the kind marks a required field. */
function fields(...specs: string[]): Field[] {
  return specs.map((spec) => {
    const [path, gqlType, kindSpec] = spec.split(':');
    return { path, gqlType, kind: kindSpec.replace('!', '') as Kind, required: kindSpec.endsWith('!') };
  });
}

// ============================================================================ the data seed() writes

/** Ids chosen by the run (derived from the seed), so that requests naming them are deterministic. */
export interface SeedIds {
  renameCarrier: string;
  deleteRate: string;
}

export const SEED_CARRIERS = [
  { carrier_tag: 'gw1', host: '10.0.0.1', port: 5060, protocol: 'UDP' },
  { carrier_tag: 'gw2', host: '10.0.0.2', port: 5061, protocol: 'TCP' },
  { carrier_tag: 'gw3', host: 'gw3.example.net', port: 5060, protocol: 'UDP' },
] as const;
export const SEED_PRICELISTS = [
  { pricelist_tag: 'retail', name: 'Retail', currency: 'USD' },
  { pricelist_tag: 'resale', name: 'Resale', currency: 'USD' },
  { pricelist_tag: 'spare', name: 'Spare', currency: 'EUR' },
] as const;
export const SEED_RATES = [
  { pricelist_tag: 'retail', carrier_tag: 'gw1', prefix: '39', connect_fee: 1, rate: 10, rate_increment: 1, interval_start: 0 },
  { pricelist_tag: 'retail', carrier_tag: 'gw2', prefix: '39', connect_fee: 0, rate: 12, rate_increment: 1, interval_start: 0 },
  { pricelist_tag: 'retail', carrier_tag: 'gw1', prefix: '44', connect_fee: 0, rate: 20, rate_increment: 60, interval_start: 0 },
  {
    pricelist_tag: 'retail',
    carrier_tag: 'gw2',
    prefix: '4420',
    connect_fee: 0,
    rate: 18,
    rate_increment: 60,
    interval_start: 0,
    description: 'London',
  },
  { pricelist_tag: 'resale', carrier_tag: 'gw1', prefix: '39', connect_fee: 0, rate: 5, rate_increment: 1, interval_start: 0 },
  { pricelist_tag: 'resale', carrier_tag: 'gw1', prefix: '44', connect_fee: 0, rate: 10, rate_increment: 60, interval_start: 0 },
] as const;
export const SEED_ACCOUNTS = [
  { account_tag: 'reseller', type: 'POSTPAID', balance: 0, max_concurrent_transactions: 20, name: 'Reseller', pricelist_tags: ['resale'] },
  {
    account_tag: 'alice',
    type: 'PREPAID',
    balance: 100000,
    max_concurrent_transactions: 5,
    name: 'Alice',
    notification_email: 'alice@example.com',
    notification_mobile: '+44 20 7946 0958',
    carrier_tags: ['gw1'],
    customer_tag: 'acme',
    linked_accounts: ['reseller'],
    pricelist_tags: ['retail'],
    tags: ['vip'],
    balance_alert_threshold: 100,
  },
  {
    account_tag: 'bob',
    type: 'POSTPAID',
    balance: 0,
    max_concurrent_transactions: 10,
    name: 'Bob',
    customer_tag: 'acme',
    pricelist_tags: ['retail'],
  },
  { account_tag: 'carol', type: 'PREPAID', balance: 5000, name: 'Carol', linked_accounts: ['reseller'], pricelist_tags: ['retail'] },
  { account_tag: 'idle', type: 'PREPAID', balance: 0, name: 'Idle', pricelist_tags: ['retail'] },
] as const;

const CALL = { source: '+3220000', destination: '393331234567' };
const PAST = { timestamp_begin: '2026-03-01T10:00:00', timestamp_end: '2026-03-01T10:01:00' };

/** Agent calls seed() makes through the REST mirror (every one must answer ok). */
export const SEED_AGENT_CALLS: Array<[string, Record<string, unknown>]> = [
  ...['run-end-g', 'run-end-r', 'run-rb-g', 'run-rb-r'].map((tag): [string, Record<string, unknown>] => [
    '/v1/begin_transaction',
    { transaction_tag: tag, account_tag: 'bob', ...CALL },
  ]),
  ['/v1/begin_transaction', { transaction_tag: 'live-1', account_tag: 'alice', ...CALL, carrier_ip: '10.0.0.1:5060' }],
  ['/v1/record_transaction', { transaction_tag: 'cdr-upd', account_tag: 'alice', ...CALL, ...PAST }],
  ['/v1/record_transaction', { transaction_tag: 'cdr-del', account_tag: 'alice', ...CALL, ...PAST }],
  ['/v1/record_transaction', { transaction_tag: 'cdr-3', account_tag: 'carol', source: '100', destination: '442071234567', ...PAST }],
  ['/v1/begin_transaction', { transaction_tag: 'done-1', account_tag: 'bob', ...CALL }],
  ['/v1/end_transaction', { transaction_tag: 'done-1', account_tag: 'bob' }],
];

// ============================================================================ the agent

const CALL_FIELDS = [
  'transaction_tag:String!:tag!',
  'account_tag:String!:tag!',
  'source:String!:number!',
  'destination:String!:number!',
  'source_ip:String:address',
  'carrier_ip:String:address',
  'tags:[String!]:tags',
  'destination_account_tag:String:tag',
  'timestamp_auth:String:time',
];

/** The agent's operations; `s` tells the two surfaces' tags apart, so both control runs can succeed. */
function agentOps(surface: Surface): Base[] {
  const s = surface === 'agent-gql' ? 'g' : 'r';
  const rest = surface === 'agent-rest';
  const op = (
    name: string,
    op: 'query' | 'mutation',
    field: string,
    route: string,
    selection: string,
    args: Record<string, unknown>,
    specs: string[],
  ): Base => ({
    surface,
    name,
    op,
    field,
    selection,
    path: rest ? route : '/graphql',
    args,
    fields: fields(...specs),
  });
  const result = '{ ok reason }';
  return [
    op(
      'authorization',
      'query',
      'authorization',
      '/v1/authorization',
      '{ authorized unauthorized_reason max_available_units balance carriers }',
      { transaction_tag: `auth-${s}`, account_tag: 'alice', source: CALL.source, destination: CALL.destination },
      [
        'transaction_tag:String:tag',
        'account_tag:String!:tag!',
        'destination_account_tag:String:tag',
        'source:String:number',
        'destination:String!:number!',
      ],
    ),
    op(
      'begin',
      'mutation',
      'beginTransaction',
      '/v1/begin_transaction',
      result,
      {
        transaction_tag: `new-call-${s}`,
        account_tag: 'alice',
        ...CALL,
        source_ip: '192.0.2.10',
        carrier_ip: '10.0.0.1:5060',
        tags: ['fuzz', 'sip'],
      },
      [...CALL_FIELDS, 'timestamp_begin:String:time'],
    ),
    op('end', 'mutation', 'endTransaction', '/v1/end_transaction', result, { transaction_tag: `run-end-${s}`, account_tag: 'bob' }, [
      'transaction_tag:String!:tag!',
      'account_tag:String!:tag!',
      'timestamp_end:String:time',
    ]),
    op(
      'record',
      'mutation',
      'recordTransaction',
      '/v1/record_transaction',
      result,
      {
        transaction_tag: `new-cdr-${s}`,
        account_tag: 'carol',
        source: '100',
        destination: '442071234567',
        source_ip: '192.0.2.10',
        carrier_ip: '10.0.0.1',
        tags: ['fuzz'],
        ...PAST,
      },
      [...CALL_FIELDS, 'timestamp_begin:String!:time!', 'timestamp_end:String!:time!'],
    ),
    op(
      'rollback',
      'mutation',
      'rollbackTransaction',
      '/v1/rollback_transaction',
      result,
      { transaction_tag: `run-rb-${s}`, account_tag: 'bob' },
      ['transaction_tag:String!:tag!', 'account_tag:String!:tag!'],
    ),
    op(
      'recordTransactions',
      'mutation',
      'recordTransactions',
      '/v1/record_transactions',
      '{ index transaction_tag ok reason }',
      {
        transactions: [
          { transaction_tag: `batch-${s}-1`, account_tag: 'alice', ...CALL, ...PAST },
          {
            transaction_tag: `batch-${s}-2`,
            account_tag: 'bob',
            source: '100',
            destination: '442071234567',
            carrier_ip: '10.0.0.1:5060',
            tags: ['fuzz'],
            ...PAST,
          },
        ],
      },
      [
        'transactions:[RecordInput!]!:list!',
        ...[...CALL_FIELDS, 'timestamp_begin:String:time!', 'timestamp_end:String:time!'].map(
          (f) => `transactions.*.${f.replace(/:[^:]*:/, '::')}`,
        ),
      ],
    ),
  ];
}

// ============================================================================ the management API

const LIST = ['page:Int:int', 'perPage:Int:perPage', 'sortField:String:sortField', 'sortOrder:String:sortOrder'];

function apiOps(ids: SeedIds): Base[] {
  const q = (name: string, selection: string, args: Record<string, unknown>, ...specs: string[]): Base => ({
    surface: 'api',
    name,
    op: 'query',
    field: name,
    selection,
    path: '/graphql',
    args,
    fields: fields(...specs),
  });
  const m = (name: string, selection: string, args: Record<string, unknown>, ...specs: string[]): Base => ({
    surface: 'api',
    name,
    op: 'mutation',
    field: name,
    selection,
    path: '/graphql',
    args,
    fields: fields(...specs),
  });
  const carrier = ['host:String:host', 'port:Int:port', 'protocol:CarrierProtocol:enum', 'active:Boolean:bool'];
  const rateValues = [
    'connect_fee:Int:uint',
    'rate_increment:Int:int',
    'interval_start:Int:int',
    'datetime_start:DateTime:datetime',
    'datetime_end:DateTime:datetime',
    'description:String:description',
  ];
  const account = [
    'type:AccountType:enum',
    'balance:BigInt:bigint',
    'active:Boolean:bool',
    'max_concurrent_transactions:Int:int',
    'name:String:text',
    'notification_email:String:email',
    'notification_mobile:String:mobile',
    'carrier_tags:[String!]:tags',
    'carrier_tags_override:[String!]:tags',
    'customer_tag:String:tag',
    'linked_accounts:[String!]:tags',
    'linked_accountsIds:[ID!]:tags',
    'pricelist_tags:[String!]:tags',
    'tags:[String!]:tags',
    'balance_alert_threshold:BigInt:bigint',
  ];
  const transaction = [
    'source:String:number',
    'destination:String:number',
    'source_ip:String:address',
    'carrier_ip:String:address',
    'tags:[String!]:tags',
    'authorized:Boolean:bool',
    'unauthorized_reason:String:text',
    'destination_rate:InputAccountPricelistRate:object',
    'destination_rate.pricelist_tag::tag!',
    'destination_rate.carrier_tag::tag!',
    'destination_rate.prefix::prefix!',
    'destination_rate.rate::int!',
    'destination_rate.connect_fee::int',
    'destination_rate.description::description',
    'timestamp_auth:DateTime:datetime',
    'timestamp_begin:DateTime:datetime',
    'timestamp_end:DateTime:datetime',
    'inbound:Boolean:bool',
    'failed:Boolean:bool',
    'duration:Int:int',
    'fee:BigInt:bigint',
  ];
  return [
    q('version', '', {}),
    q(
      'Account',
      '{ id account_tag balance linked_accounts { account_tag } running_transactions { transaction_tag in_progress } destination_rate(destination: "393331234567") { prefix rate } least_cost_routing(destination: "393331234567") }',
      { account_tag: 'alice' },
      'id:ID:lookup',
      'account_tag:String:lookup',
    ),
    q('Carrier', '{ id host port protocol active }', { carrier_tag: 'gw1' }, 'id:ID:lookup', 'carrier_tag:String:lookup'),
    q('Pricelist', '{ id name currency }', { tag: 'retail' }, 'pricelist_tag:String:lookup', 'tag:String:lookup'),
    q(
      'PricelistRate',
      '{ id rate }',
      { pricelist_tag: 'retail', carrier_tag: 'gw2', prefix: '4420' },
      'pricelist_tag:String:lookup',
      'carrier_tag:String:lookup',
      'prefix:String:lookup',
      'pricelist_id:ID:lookup',
    ),
    q(
      'Transaction',
      '{ id fee duration destination_rate { prefix rate } account { account_tag } }',
      { account_tag: 'alice', transaction_tag: 'cdr-upd' },
      'account_tag:String:lookup',
      'transaction_tag:String:lookup',
    ),
    q(
      'allAccounts',
      '{ id account_tag balance linked_accounts { account_tag } }',
      { page: 0, perPage: 25, sortField: 'balance', sortOrder: 'desc', filter: { customer_tag: 'acme', active: true } },
      ...LIST,
      'filter:AccountFilter:object',
      'filter.customer_tag::lookup',
      'filter.account_tag::lookup',
      'filter.active::bool',
      'filter.type::enum',
      'filter.with_running_transactions::bool',
      'filter.ids::lookup',
    ),
    q(
      'allCarriers',
      '{ id carrier_tag }',
      { sortField: 'carrier_tag', filter: { carrier_tag: ['gw1', 'gw2'] } },
      ...LIST,
      'filter:CarrierFilter:object',
      'filter.carrier_tag::lookup',
      'filter.host::lookup',
      'filter.protocol::enum',
    ),
    q(
      'allPricelists',
      '{ id pricelist_tag }',
      { perPage: 10, filter: { currency: 'USD' } },
      ...LIST,
      'filter:PricelistFilter:object',
      'filter.currency::enum',
    ),
    q(
      'allPricelistRates',
      '{ id prefix carrier_tag rate }',
      { sortField: 'prefix', filter: { pricelist_tag: 'retail', prefix: ['44', '4420'] } },
      ...LIST,
      'filter:PricelistRateFilter:object',
      'filter.pricelist_tag::lookup',
      'filter.prefix::lookup',
      'filter.carrier_id::lookup',
    ),
    q(
      'allTransactions',
      '{ transaction_tag fee account { account_tag } }',
      {
        sortField: 'timestamp_begin',
        sortOrder: 'desc',
        perPage: 50,
        filter: { account_tag: 'alice', timestamp_begin_gte: '2026-01-01T00:00:00' },
      },
      ...LIST,
      'filter:TransactionFilter:object',
      'filter.account_tag::lookup',
      'filter.timestamp_begin_gte::datetime',
      'filter.timestamp_begin_lt::datetime',
      'filter.inbound::bool',
    ),
    // Counts ignore paging and sorting: only the filter is checked.
    q(
      '_allAccountsMeta',
      '{ count }',
      { filter: { customer_tag: 'acme', with_running_transactions: true } },
      'filter:AccountFilter:object',
      'filter.customer_tag::lookup',
      'filter.with_running_transactions::bool',
    ),
    q(
      'leastCostRouting',
      '',
      { destination: '442071234567', pricelist_tags: ['retail'], carrier_tags: ['gw2'] },
      'destination:String:lookup',
      'pricelist_tags:[String!]:lookup',
      'carrier_tags:[String!]:lookup',
      'carrier_tags_override:[String!]:lookup',
    ),

    m(
      'createCarrier',
      '{ id carrier_tag }',
      { carrier_tag: 'gw9', host: 'gw9.example.net', port: 5060, protocol: 'UDP', active: true },
      'carrier_tag:String:tag!',
      'host:String:host!',
      'port:Int:port!',
      'protocol:CarrierProtocol:enum',
      'active:Boolean:bool',
    ),
    m(
      'updateCarrier',
      '{ carrier_tag host port }',
      { carrier_tag: 'gw2', host: '10.0.0.22', port: 5062 },
      'carrier_tag:String:lookup!',
      ...carrier,
    ),
    m(
      'updateCarrier',
      '{ id carrier_tag }',
      { id: ids.renameCarrier, carrier_tag: 'gw4-renamed', host: 'gw4.example.net' },
      'id:ID:id!',
      'carrier_tag:String:tag',
      ...carrier,
    ),
    m('deleteCarrier', '{ id carrier_tag }', { carrier_tag: 'gw3' }, 'carrier_tag:String:lookup!', 'id:ID:id'),
    m(
      'createPricelist',
      '{ id pricelist_tag }',
      { pricelist_tag: 'wholesale', name: 'Wholesale', currency: 'EUR' },
      'pricelist_tag:String:tag!',
      'name:String:text',
      'currency:PricelistCurrency:enum!',
    ),
    m(
      'updatePricelist',
      '{ pricelist_tag name }',
      { tag: 'retail', name: 'Retail 2026' },
      'tag:String:lookup!',
      'name:String:text',
      'currency:PricelistCurrency:enum',
    ),
    m('deletePricelist', '{ id pricelist_tag }', { pricelist_tag: 'spare' }, 'pricelist_tag:String:lookup!', 'id:ID:id'),
    m(
      'createPricelistRate',
      '{ id prefix rate }',
      {
        pricelist_tag: 'retail',
        carrier_tag: 'gw1',
        prefix: '4930',
        connect_fee: 0,
        rate: 15,
        rate_increment: 60,
        interval_start: 0,
        datetime_start: '2026-01-01T00:00:00',
        datetime_end: '2027-01-01T00:00:00Z',
        description: 'Berlin',
      },
      'pricelist_tag:String:tag!',
      'carrier_tag:String:tag!',
      'prefix:String:prefix!',
      'rate:Int:uint!',
      ...rateValues,
    ),
    m(
      'updatePricelistRate',
      '{ id rate }',
      { pricelist_tag: 'retail', carrier_tag: 'gw2', prefix: '4420', rate: 19, description: 'London 2' },
      'pricelist_tag:String:lookup!',
      'carrier_tag:String:lookup!',
      'prefix:String:lookup!',
      'rate:Int:uint',
      ...rateValues,
    ),
    m('deletePricelistRate', '{ id prefix }', { id: ids.deleteRate }, 'id:ID:id!'),
    m(
      'createAccount',
      '{ id account_tag balance }',
      {
        account_tag: 'dave',
        type: 'PREPAID',
        balance: 500,
        max_concurrent_transactions: 2,
        name: 'Dave',
        notification_email: 'dave@example.com',
        notification_mobile: '+44 20 7946 0958',
        carrier_tags: ['gw1'],
        customer_tag: 'acme',
        linked_accounts: ['reseller'],
        pricelist_tags: ['retail'],
        tags: ['vip'],
        balance_alert_threshold: 100,
      },
      'account_tag:String:tag!',
      ...account,
    ),
    m(
      'updateAccount',
      '{ account_tag name tags }',
      { account_tag: 'alice', name: 'Alice B', notification_email: 'alice.b@example.com', tags: ['vip', 'gold'] },
      'account_tag:String:lookup!',
      ...account,
    ),
    m(
      'incrementAccountBalance',
      '{ account_tag balance }',
      { account_tag: 'carol', amount: 500 },
      'account_tag:String:lookup!',
      'amount:BigInt:bigint!',
    ),
    m('deleteAccount', '{ id account_tag }', { account_tag: 'idle' }, 'account_tag:String:lookup!', 'id:ID:id'),
    m(
      'createTransaction',
      '{ id fee }',
      {
        transaction_tag: 'cdr-9',
        account_tag: 'alice',
        source: '+3220000',
        destination: '442071234567',
        carrier_ip: '10.0.0.1:5060',
        destination_rate: {
          pricelist_tag: 'retail',
          carrier_tag: 'gw1',
          prefix: '44',
          connect_fee: 0,
          rate: 20,
          rate_increment: 60,
          interval_start: 0,
        },
        timestamp_begin: '2026-03-01T10:00:00',
        timestamp_end: '2026-03-01T10:00:38',
        duration: 38,
        fee: 20,
      },
      'transaction_tag:String:tag!',
      'account_tag:String:tag!',
      ...transaction,
    ),
    m(
      'updateTransaction',
      '{ id failed }',
      { account_tag: 'alice', transaction_tag: 'cdr-upd', failed: true },
      'account_tag:String:lookup!',
      'transaction_tag:String:lookup!',
      ...transaction,
    ),
    m(
      'deleteTransaction',
      '{ id fee }',
      { account_tag: 'alice', transaction_tag: 'cdr-del' },
      'account_tag:String:lookup!',
      'transaction_tag:String:lookup!',
    ),
  ];
}

export function requestTable(ids: SeedIds): Base[] {
  return [...apiOps(ids), ...agentOps('agent-gql'), ...agentOps('agent-rest')];
}
