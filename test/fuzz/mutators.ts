/**
 * The fuzz test's mutators (test/fuzz/README.md): each turns a valid request of requests.ts into one
 * the service must refuse, and says how:
 * - `reject`: the request is unusable (not JSON, not a GraphQL document, over a limit, ...): HTTP 4xx;
 * - `refuse`: an error answer (GraphQL `errors[]`, REST 4xx; in a batch every item BAD_USER_INPUT),
 *   never a result, never a change;
 * - `any`: no promise beyond "no 5xx, the documented shape" (a query looking up a strange value may
 *   answer null).
 * A case is a function of (seed, index) only: `--case N` builds it again.
 */
import { between, pick, seededRng, type Rng } from '../support/rng';
import type { Base, Field, Kind, Surface } from './requests';

export type Expect = 'reject' | 'refuse' | 'any';

export interface HttpRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Case {
  index: number;
  base: Base;
  /** Mutator family (`controls`, `notDocument`, ...). */
  mutator: string;
  /** What exactly: the field and the variant. */
  detail: string;
  expect: Expect;
  /** Sent with nothing else in flight (it may load the service for long). */
  exclusive: boolean;
  /** The field whose value was broken: a BAD_USER_INPUT answer must name a field. */
  field?: string;
  request: HttpRequest;
  /** The request shortened for reading. */
  shown: string;
}

export interface Tokens {
  /** read, write and agent scopes. */
  all: string;
  /** read only. */
  reader: string;
}

// ============================================================================ randomness

export function uuidFrom(rng: Rng): string {
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rng() * 16).toString(16)).join('');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(rng, ['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`;
}

// ============================================================================ deep values

/**
 * Deeply nested values are written as text (JSON.stringify and the GraphQL printer would recurse):
 * a placeholder string in the value, replaced after serialisation.
 */
const DEEP = /"?@@deep:(arrays|objects):(\d+)@@"?/g;
const deep = (shape: 'arrays' | 'objects', depth: number) => `@@deep:${shape}:${depth}@@`;

function expandDeep(text: string, syntax: 'json' | 'graphql'): string {
  return text.replace(DEEP, (_m, shape: string, n: string) => {
    const depth = Number(n);
    if (shape === 'arrays') return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    return `${(syntax === 'json' ? '{"a":' : '{a: ').repeat(depth)}1${'}'.repeat(depth)}`;
  });
}

// ============================================================================ encoding a request

const MISSING = Symbol('missing');

/** A copy of `args` with `path` set (or removed, for MISSING); `*` stands for every item of a list. */
function setPath(args: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const put = (target: unknown, keys: string[]): unknown => {
    if (keys[0] === '*') return Array.isArray(target) ? target.map((item) => put(item, keys.slice(1))) : target;
    const copy = { ...((target ?? {}) as Record<string, unknown>) };
    if (keys.length === 1) {
      if (value === MISSING) delete copy[keys[0]];
      else copy[keys[0]] = value;
    } else {
      copy[keys[0]] = put(copy[keys[0]], keys.slice(1));
    }
    return copy;
  };
  return put(args, path.split('.')) as Record<string, unknown>;
}

function getPath(args: Record<string, unknown>, path: string): unknown {
  let value: unknown = args;
  for (const key of path.split('.'))
    value = key === '*' ? (value as unknown[] | undefined)?.[0] : (value as Record<string, unknown> | undefined)?.[key];
  return value;
}

/** A GraphQL literal; enum values (by path) are written as names. */
function literal(value: unknown, path: string, enums: Set<string>): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map((v) => literal(v, path, enums)).join(', ')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}: ${literal(v, `${path}.${k}`, enums)}`)
      .join(', ')}}`;
  if (typeof value === 'string') return enums.has(path) && /^[A-Z][A-Z_]*$/.test(value) ? value : JSON.stringify(value);
  return String(value);
}

interface GraphqlShape {
  args?: Record<string, unknown>;
  /** Arguments as literals in the document instead of variables. */
  inline?: boolean;
  /** Variables declared and used but not supplied. */
  unsupplied?: string[];
  /** Declared types other than the argument's. */
  varTypes?: Record<string, string>;
  /** Text added to the field's arguments. */
  extraArgs?: string;
  /** Text added to the selection. */
  extraSelection?: string;
  keyword?: string;
  /** The operation's name (null: anonymous). */
  name?: string | null;
}

export function topFieldOf(base: Base, name: string): Field | undefined {
  return base.fields.find((f) => f.path === name);
}

/** The GraphQL document and variables of a base request (or of the given variation of it). */
export function graphqlParts(base: Base, shape: GraphqlShape = {}): { query: string; variables: Record<string, unknown> } {
  const args = shape.args ?? base.args;
  const enums = new Set(base.fields.filter((f) => f.kind === 'enum').map((f) => f.path));
  const names = [...Object.keys(args), ...(shape.unsupplied ?? [])];
  const variables: Record<string, unknown> = {};
  const decls: string[] = [];
  const uses: string[] = [];
  for (const name of names) {
    if (shape.inline) {
      uses.push(`${name}: ${literal(args[name], name, enums)}`);
      continue;
    }
    decls.push(`$${name}: ${shape.varTypes?.[name] ?? topFieldOf(base, name)?.gqlType ?? 'String'}`);
    uses.push(`${name}: $${name}`);
    if (name in args) variables[name] = args[name];
  }
  if (shape.extraArgs) uses.push(shape.extraArgs);
  const keyword = shape.keyword ?? base.op;
  const name = shape.name === undefined ? 'Fuzz' : shape.name;
  const head = `${keyword}${name ? ` ${name}` : ''}${decls.length ? `(${decls.join(', ')})` : ''}`;
  const selection = shape.extraSelection
    ? base.selection
      ? base.selection.replace(/}$/, `${shape.extraSelection} }`)
      : `{ ${shape.extraSelection} }`
    : base.selection;
  const query = `${head} { ${base.field}${uses.length ? `(${uses.join(', ')})` : ''}${selection ? ` ${selection}` : ''} }`;
  return { query: shape.inline ? expandDeep(query, 'graphql') : query, variables };
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** A POST of a JSON value (deep placeholders expanded). */
function postJson(path: string, body: unknown, token: string, headers: Record<string, string> = {}): HttpRequest {
  return {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...bearer(token), ...headers },
    body: expandDeep(JSON.stringify(body), 'json'),
  };
}

/** The request of a base as a client sends it (args possibly changed). */
export function encode(base: Base, tokens: Tokens, shape: GraphqlShape = {}): HttpRequest {
  if (base.surface === 'agent-rest') return postJson(base.path, shape.args ?? base.args, tokens.all);
  const { query, variables } = graphqlParts(base, shape);
  return postJson(base.path, { query, variables, operationName: shape.name === undefined ? 'Fuzz' : undefined }, tokens.all);
}

// ============================================================================ reading a request

// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u00ad\u2028\u2029\ufeff\ud800-\udfff]/g;

/** A short, printable rendering of text: long runs cut, control and invisible characters escaped. */
export function short(text: string, max = 400): string {
  const cut = text.replace(DEEP, (_m, shape: string, n: string) => `<${n} nested ${shape}>`);
  const runs = cut.replace(/(.)\1{39,}/gs, (run, ch: string) => `${ch.repeat(8)}…(${run.length} × ${JSON.stringify(ch)})`);
  const visible = runs.replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return visible.length > max ? `${visible.slice(0, max)}…(${visible.length} chars)` : visible;
}

/** Request line, unusual headers, body shortened; deep nesting and long runs are summarised first. */
export function showRequest(req: HttpRequest, tokens: Tokens): string {
  const notes: string[] = [];
  const type = req.headers['content-type'];
  if (type !== 'application/json') notes.push(`content-type: ${type ?? 'none'}`);
  const auth = req.headers.authorization;
  if (auth !== `Bearer ${tokens.all}`)
    notes.push(`authorization: ${auth === `Bearer ${tokens.reader}` ? 'read-only token' : (auth ?? 'none')}`);
  const body = (req.body ?? '')
    .replace(/(\[{50,}|(\{"?a"?: ?){50,})/g, (m) => `<${m.length} nesting characters>`)
    .replace(/\]{50,}|\}{50,}/g, '');
  return `${req.method} ${short(req.path, 200)}${notes.length ? ` [${notes.join('; ')}]` : ''}${body ? ` ${short(body)}` : ''}`;
}

// ============================================================================ value mutators

const CONTROLS: Record<string, string> = {
  NUL: '\u0000',
  ESC: '\u001b',
  'CR LF': '\r\n',
  LF: '\n',
  TAB: '\t',
  DEL: '\u007f',
  'C1 NEL': '\u0085',
  'C1 CSI': '\u009b',
  'C1 PAD': '\u0080',
};
const SURROGATES: Record<string, string> = {
  'lone high D800': '\ud800',
  'lone low DFFF': '\udfff',
  'reversed pair DC00 D800': '\udc00\ud800',
  'lone high DBFF': '\udbff',
};

/** Kinds holding text, with a sample valid value (for fields the base leaves out) and the longest allowed. */
const TEXT_KINDS: Partial<Record<Kind, { sample: string; max: number; fill: string }>> = {
  tag: { sample: 'tag-1', max: 128, fill: 'a' },
  number: { sample: '393331234567', max: 256, fill: '1' },
  address: { sample: '10.0.0.9:5060', max: 261, fill: '1' },
  host: { sample: 'gw.example.net', max: 253, fill: 'a' },
  email: { sample: 'x@example.com', max: 254, fill: 'a' },
  mobile: { sample: '+44 20 7946 0000', max: 32, fill: '1' },
  text: { sample: 'Some name', max: 256, fill: 'x' },
  description: { sample: 'Some text', max: 1024, fill: 'x' },
  prefix: { sample: '44', max: 64, fill: '4' },
  time: { sample: '2026-03-01T10:00:00', max: 64, fill: 'x' },
  datetime: { sample: '2026-03-01T10:00:00', max: 64, fill: 'x' },
  id: { sample: '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b', max: 36, fill: 'a' },
  lookup: { sample: 'alice', max: 128, fill: 'a' },
  sortField: { sample: 'id', max: 32, fill: 'a' },
  sortOrder: { sample: 'asc', max: 4, fill: 'a' },
};

/** Values of the right type but the wrong form, by kind (each must be refused). */
const BAD_FORMS: Partial<Record<Kind, unknown[]>> = {
  tag: [' alice', 'alice ', '\u00a0alice'],
  // Spaces inside a number are visual separators (issue 11: `+39 06 1234`, `sip:+39 06 1234@host`); a
  // value naming no number, other whitespace, or whitespace around it is refused.
  number: ['39\u00a0333', ' 393331234567', 'sip:@gw.example.net', '+', 'sip:gw.example.net'],
  prefix: ['44 20', ' 44'],
  time: [
    '2026-13-01T00:00:00',
    '2026-02-30T10:00:00',
    '2026-03-01T25:00:00',
    '2026-03-01T10:00:00+02:00',
    '2026-03-01 10:00:00',
    '2026-03-01',
    'yesterday',
    '1772359200000',
    '0000-00-00T00:00:00',
  ],
  email: ['alice', 'alice@', '@example.com', 'a@b', 'alice@example.com, bob@example.com', 'alice@exa mple.com', '<alice@example.com>'],
  mobile: ['abc', '++44 20 7946 0958', '+44 20 7946 0958 ext. 5', '12', '+', '44-20-7946-xxxx'],
  host: [
    '10.0.0.1:5060',
    'http://gw.example.net',
    'gw..example.net',
    '-gw.example.net',
    'gw_1.example.net',
    '[2001:db8::1]',
    'gw 1.example.net',
  ],
  address: [
    '10.0.0.1:0',
    '10.0.0.1:65536',
    '10.0.0.1:5060:1',
    '[10.0.0.1]:5060',
    'http://10.0.0.1',
    '10.0.0.1:abc',
    'gw_1:5060',
    '::1]:5060',
  ],
  id: ['not-a-uuid', '6f1c', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz', '{6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b}'],
  enum: ['usd', 'BTC', 'udp', 'PREPAID ', ''],
  sortField: ['nope', '__proto__', 'constructor', '$where', 'balance.$gt', 'running_transactions'],
  sortOrder: ['up', 'descending', 'asc desc', '-1', 'asc;'],
  bigint: ['1.5', 'NaN', 'Infinity', '1e3', '0x10', ' 1', '1 ', '', '12abc', '\u0661\u0662'],
};
(BAD_FORMS as Record<string, unknown[]>).datetime = BAD_FORMS.time!;

const INT_KINDS: Kind[] = ['int', 'uint', 'port', 'perPage'];
const OUT_OF_RANGE: Partial<Record<Kind, number[]>> = { uint: [-1, -100], port: [0, -1, 65536, 100000], perPage: [1001, 5000, 1000000] };

/** Values of a wrong type for the kind (for GraphQL and REST alike). */
function wrongTypes(kind: Kind, surface: Surface): unknown[] {
  if (kind === 'lookup') return [true, false, 1.5, {}, { value: 'x' }, [['x']]];
  if (kind === 'tags') return [42, {}, [42], [['a']], [null], [true], ...(surface === 'agent-rest' ? ['vip'] : [])];
  if (kind === 'list') return [42, 'x', [42], ['x'], [[]], [null]];
  if (kind === 'object') return ['x', 42, true, [1], [{}]];
  if (INT_KINDS.includes(kind)) return ['12', '1', 1.5, -0.5, true, {}, [1], 'NaN', 'Infinity', '1e3'];
  if (kind === 'bigint') return [1.5, true, {}, [1], 1e300];
  if (kind === 'bool') return ['true', 'false', 1, 0, 'yes', {}, [true]];
  if (kind === 'enum') return [1, true, {}, ['USD']];
  return [42, 0, -1, 4.2, true, false, {}, { value: 'x' }, ['x'], []];
}

interface ValueMutation {
  family: string;
  variant: string;
  value: unknown;
}

/** Families that change what a text says (a query may answer null to them); the others break its type or presence. */
const CONTENT = new Set(['controls', 'surrogate', 'bom', 'long', 'empty', 'form', 'tooMany', 'repeated', 'badEntry']);

function textMutation(rng: Rng, kind: Kind, current: unknown, required: boolean): ValueMutation | null {
  const info = TEXT_KINDS[kind];
  if (!info) return null;
  const s = typeof current === 'string' && current.length > 0 ? current : info.sample;
  const at = (insert: string): [string, string] => {
    const where = pick(rng, ['start', 'middle', 'end'] as const);
    const i = where === 'start' ? 0 : where === 'end' ? s.length : Math.max(1, Math.floor(s.length / 2));
    return [s.slice(0, i) + insert + s.slice(i), where];
  };
  const families = ['controls', 'surrogate', 'long'];
  if (kind !== 'text' && kind !== 'description') families.push('bom');
  if (required && !['text', 'description', 'prefix'].includes(kind)) families.push('empty');
  if (BAD_FORMS[kind]) families.push('form', 'form');
  switch (pick(rng, families)) {
    case 'controls': {
      const name = pick(rng, Object.keys(CONTROLS));
      const [value, where] = at(CONTROLS[name]);
      return { family: 'controls', variant: `${name} at ${where}`, value };
    }
    case 'surrogate': {
      const name = pick(rng, Object.keys(SURROGATES));
      const [value, where] = at(SURROGATES[name]);
      return { family: 'surrogate', variant: `${name} at ${where}`, value };
    }
    case 'bom': {
      const start = rng() < 0.5;
      return { family: 'bom', variant: `BOM at ${start ? 'start' : 'end'}`, value: start ? `\ufeff${s}` : `${s}\ufeff` };
    }
    case 'empty':
      return { family: 'empty', variant: 'empty string', value: '' };
    case 'form': {
      const value = pick(rng, BAD_FORMS[kind]!);
      return { family: 'form', variant: JSON.stringify(value), value };
    }
    default: {
      const size = pick(rng, ['over', 'over', 'huge', 'enormous'] as const);
      const length = size === 'over' ? info.max + between(rng, 1, info.max + 10) : size === 'huge' ? 100_000 : 1_100_000;
      const value =
        kind === 'email'
          ? `${info.fill.repeat(length)}@example.com`
          : kind === 'time' || kind === 'datetime'
            ? `2026-03-01T10:00:00Z${info.fill.repeat(length)}`
            : info.fill.repeat(length);
      return { family: 'long', variant: `${length} characters`, value };
    }
  }
}

function valueMutation(rng: Rng, base: Base, field: Field, current: unknown): ValueMutation {
  const families: string[] = ['wrongType', 'deep'];
  if (TEXT_KINDS[field.kind]) families.push('text', 'text', 'text', 'text');
  if (field.kind === 'tags') families.push('tooMany', 'repeated', 'badEntry', 'badEntry');
  if (INT_KINDS.includes(field.kind) || field.kind === 'bigint') families.push('range', 'range');
  if (OUT_OF_RANGE[field.kind]) families.push('outOfBounds', 'outOfBounds');
  if (field.kind === 'bigint' || field.kind === 'enum') families.push('form', 'form');
  if (field.kind === 'object') families.push('unknownMember', 'unknownMember');
  if (field.required) families.push('missing', 'null');
  switch (pick(rng, families)) {
    case 'text':
      return textMutation(rng, field.kind, current, field.required)!;
    case 'tooMany': {
      const n = between(rng, 101, 150);
      return { family: 'tooMany', variant: `${n} entries`, value: Array.from({ length: n }, (_, i) => `t${i}`) };
    }
    case 'repeated':
      return { family: 'repeated', variant: 'an entry twice', value: ['vip', 'vip'] };
    case 'badEntry': {
      const entry = textMutation(rng, 'tag', 'vip', true)!;
      return { family: 'badEntry', variant: `an entry: ${entry.family} ${entry.variant}`, value: ['ok-tag', entry.value] };
    }
    case 'range': {
      const value =
        field.kind === 'bigint'
          ? pick(rng, ['9223372036854775808', '-9223372036854775809', '99999999999999999999999', 1e19, -1e19])
          : pick(rng, [2147483648, -2147483649, 1e20, 2 ** 53 + 2, -(2 ** 53 + 2)]);
      return { family: 'range', variant: String(value), value };
    }
    case 'outOfBounds': {
      const value = pick(rng, OUT_OF_RANGE[field.kind]!);
      return { family: 'outOfBounds', variant: String(value), value };
    }
    case 'form': {
      const value = pick(rng, BAD_FORMS[field.kind]!);
      return { family: 'form', variant: JSON.stringify(value), value };
    }
    case 'unknownMember':
      return { family: 'unknownMember', variant: 'member bogus', value: { ...((current ?? {}) as object), bogus: 1 } };
    case 'missing':
      return { family: 'missing', variant: 'left out', value: MISSING };
    case 'null':
      return { family: 'null', variant: 'null', value: null };
    case 'deep': {
      const shape = pick(rng, ['arrays', 'objects'] as const);
      const depth = pick(rng, [3000, 20000]);
      return { family: 'deep', variant: `${depth} nested ${shape}`, value: deep(shape, depth) };
    }
    default: {
      const value = pick(rng, wrongTypes(field.kind, base.surface));
      return { family: 'wrongType', variant: JSON.stringify(value), value };
    }
  }
}

function valueCase(rng: Rng, index: number, base: Base, tokens: Tokens): Case {
  const field = pick(rng, base.fields);
  const m = valueMutation(rng, base, field, getPath(base.args, field.path));
  const args = setPath(base.args, field.path, m.value);
  const graphql = base.surface !== 'agent-rest';
  const top = topFieldOf(base, field.path.split('.')[0]);
  const nonNull = graphql && !field.path.includes('.') && (top?.gqlType.endsWith('!') ?? false);
  const shape: GraphqlShape = { args };
  let variant = m.variant;
  if (graphql && m.value === MISSING && !field.path.includes('.') && rng() < 0.5) {
    shape.unsupplied = [field.path];
    variant = 'declared, not supplied';
  } else if (graphql && rng() < 0.3) {
    shape.inline = true;
    variant += ' (inline literal)';
  }
  let expect: Expect = 'refuse';
  if (base.op === 'query' && field.kind === 'lookup' && CONTENT.has(m.family)) expect = 'any';
  if (nonNull && (m.family === 'missing' || m.family === 'null')) expect = 'reject';
  if (m.family === 'long' && variant.startsWith('1100000')) expect = 'reject';
  const request = encode(base, tokens, shape);
  return {
    index,
    base,
    mutator: m.family,
    detail: `${field.path}: ${variant}`,
    expect,
    exclusive: false,
    field: field.path,
    request,
    shown: showRequest(request, tokens),
  };
}

// ============================================================================ request mutators

interface Built {
  detail: string;
  expect: Expect;
  request: HttpRequest;
  exclusive?: boolean;
}

type RequestMutator = (rng: Rng, base: Base, tokens: Tokens) => Built | null;

const post = (path: string, body: string, headers: Record<string, string>): HttpRequest => ({ method: 'POST', path, headers, body });

/** Broken JSON, made from the valid body text. */
function brokenJson(rng: Rng, text: string): [string, string] {
  return pick(rng, [
    (): [string, string] => {
      const cut = between(rng, 1, text.length - 1);
      return [`cut after ${cut} of ${text.length} characters`, text.slice(0, cut)];
    },
    (): [string, string] => ['trailing garbage', `${text}x`],
    (): [string, string] => ['extra closing brace', `${text}}`],
    (): [string, string] => ['single quotes', text.replace(/"/g, "'")],
    (): [string, string] => ['raw control character in a string', text.replace(/":"/, '":"\u0001')],
    (): [string, string] => ['trailing comma', text.replace(/}$/, ',}')],
    (): [string, string] => ['a comment', `/* fuzz */${text}`],
    (): [string, string] => ['NaN', text.replace(/^\{/, '{"n":NaN,')],
    (): [string, string] => ['empty body', ''],
    (): [string, string] => ['only "{"', '{'],
  ])();
}

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=fuzz',
  'application/xml',
  'text/html',
  'application/octet-stream',
  '',
];

/** Mutators of the HTTP request itself, for every surface. */
const HTTP_MUTATORS: Record<string, RequestMutator> = {
  brokenJson: (rng, base, tokens) => {
    const valid = encode(base, tokens);
    const [detail, body] = brokenJson(rng, valid.body!);
    return { detail, expect: 'reject', request: post(base.path, body, valid.headers) };
  },
  contentType: (rng, base, tokens) => {
    const valid = encode(base, tokens);
    const type = pick(rng, CONTENT_TYPES);
    const headers = { ...valid.headers };
    if (type) headers['content-type'] = type;
    else delete headers['content-type'];
    return { detail: type || 'no content-type', expect: 'reject', request: post(base.path, valid.body!, headers) };
  },
  bodyNotObject: (rng, base, tokens) => {
    const valid = encode(base, tokens);
    const batchRoute = base.path === '/v1/record_transactions';
    // A bare array is a valid body of /v1/record_transactions.
    const bodies = ['1', '"x"', 'null', 'true', '0', ...(batchRoute ? [] : ['[]', `[${valid.body}]`, `[${valid.body},${valid.body}]`])];
    const body = pick(rng, bodies);
    return { detail: short(body, 40), expect: 'reject', request: post(base.path, body, valid.headers) };
  },
  auth: (rng, base, tokens) => {
    const valid = encode(base, tokens);
    const readerRefused = base.surface !== 'api' || base.op === 'mutation';
    const variants: Array<[string, Record<string, string>]> = [
      ['no token', {}],
      ['unknown token', { authorization: 'Bearer fuzz-unknown-token-0000000000' }],
      ['malformed header', { authorization: 'Bearer' }],
      ['basic, empty password', { authorization: `Basic ${Buffer.from('user:').toString('base64')}` }],
      ...(readerRefused ? [['read-only token', { authorization: `Bearer ${tokens.reader}` }] as [string, Record<string, string>]] : []),
    ];
    const [detail, auth] = pick(rng, variants);
    const headers = { ...valid.headers, ...auth };
    if (!auth.authorization) delete headers.authorization;
    return { detail, expect: 'reject', request: post(base.path, valid.body!, headers) };
  },
};

/** REST only. */
const REST_MUTATORS: Record<string, RequestMutator> = {
  protoKeys: (rng, base, tokens) => {
    const valid = encode(base, tokens);
    const [detail, key] = pick(rng, [
      ['__proto__ member', '"__proto__":{"account_tag":"alice","ok":true}'],
      ['constructor.prototype member', '"constructor":{"prototype":{"account_tag":"alice"}}'],
    ] as const);
    return { detail, expect: 'reject', request: post(base.path, valid.body!.replace(/^\{/, `{${key},`), valid.headers) };
  },
  deepBody: (rng, base, tokens) => {
    const shape = pick(rng, ['arrays', 'objects'] as const);
    const depth = pick(rng, [3000, 20000]);
    const request = postJson(base.path, deep(shape, depth), tokens.all);
    return {
      detail: `${depth} nested ${shape}`,
      expect: shape === 'arrays' && base.path !== '/v1/record_transactions' ? 'reject' : 'refuse',
      request,
    };
  },
};

/**
 * A selection `depth` levels deep: linked accounts of linked accounts (the API), or introspection's
 * `fields { type { ... } }` (both endpoints); written plainly, or one named or inline fragment a step.
 */
function deepSelection(depth: number, style: 'named' | 'inline' | 'plain', chain: 'accounts' | 'introspection'): string {
  const [root, type, open, close, leaf, perStep] =
    chain === 'accounts'
      ? ['allAccounts', 'Account', 'linked_accounts { ', ' }', 'account_tag', 1]
      : ['__type(name: "Query")', '__Type', 'fields { type { ', ' } }', 'name', 2];
  const steps = Math.ceil(depth / perStep);
  if (style === 'plain') return `query Fuzz { ${root} { ${open.repeat(steps)}${leaf}${close.repeat(steps)} } }`;
  if (style === 'inline')
    return `query Fuzz { ${root} { ${`... on ${type} { ${open}`.repeat(steps)}${leaf}${`${close} }`.repeat(steps)} } }`;
  const fragments = Array.from(
    { length: steps },
    (_, i) => `fragment F${i} on ${type} { ${open}${i + 1 < steps ? `...F${i + 1}` : leaf}${close} }`,
  );
  return `query Fuzz { ${root} { ...F0 } } ${fragments.join(' ')}`;
}

function aliases(n: number, field: string): string {
  return `query Fuzz { ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`;
}

/** GraphQL only: documents and bodies that are not a usable GraphQL request. */
const GRAPHQL_MUTATORS: Record<string, RequestMutator> = {
  notDocument: (rng, base, tokens) => {
    const { variables } = graphqlParts(base);
    const query = pick(rng, [
      {},
      [],
      1,
      0,
      null,
      true,
      { kind: 'Document', definitions: [] },
      '1',
      'null',
      '{}',
      '[]',
      '{"a":1}',
      '',
      '   ',
      '# only a comment',
      'true',
      '"query"',
    ]);
    return {
      detail: `query: ${short(JSON.stringify(query), 60)}`,
      expect: 'reject',
      request: postJson(base.path, { query, variables }, tokens.all),
    };
  },
  noQuery: (rng, base, tokens) => {
    const { query, variables } = graphqlParts(base);
    const [detail, body] = pick(rng, [
      ['empty object', {}],
      ['variables only', { variables }],
      ['operationName only', { operationName: 'Fuzz' }],
      ['"Query" instead of "query"', { Query: query, variables }],
    ] as Array<[string, unknown]>);
    return { detail, expect: 'reject', request: postJson(base.path, body, tokens.all) };
  },
  getMutation: (_rng, base, tokens) => {
    if (base.op !== 'mutation') return null;
    const { query, variables } = graphqlParts(base);
    const path = `${base.path}?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify(variables))}&operationName=Fuzz`;
    return { detail: 'mutation over GET', expect: 'reject', request: { method: 'GET', path, headers: bearer(tokens.all) } };
  },
  operationName: (rng, base, tokens) => {
    const { query, variables } = graphqlParts(base);
    const operationName = pick(rng, ['Nope', 42, {}, ['Fuzz'], true]);
    return {
      detail: `operationName ${JSON.stringify(operationName)}`,
      expect: 'reject',
      request: postJson(base.path, { query, variables, operationName }, tokens.all),
    };
  },
  severalAnonymous: (rng, base, tokens) => {
    const { query, variables } = graphqlParts(base, { name: null });
    const n = pick(rng, [2, 50]);
    return {
      detail: `${n} anonymous operations`,
      expect: 'reject',
      request: postJson(base.path, { query: Array(n).fill(query).join('\n'), variables }, tokens.all),
    };
  },
  twoNamedNoName: (_rng, base, tokens) => {
    const { query, variables } = graphqlParts(base);
    return {
      detail: 'two named operations, no operationName',
      expect: 'reject',
      request: postJson(base.path, { query: `query Other { __typename }\n${query}`, variables }, tokens.all),
    };
  },
  subscription: (_rng, base, tokens) => {
    const { query, variables } = graphqlParts(base, { keyword: 'subscription' });
    return {
      detail: 'subscription',
      expect: 'reject',
      request: postJson(base.path, { query, variables, operationName: 'Fuzz' }, tokens.all),
    };
  },
  unknownArgument: (rng, base, tokens) => {
    const first = Object.keys(base.args)[0];
    const extra = pick(rng, ['bogus: 1', '__proto__: "x"', ...(first ? [`${first}: null`] : [])]);
    const request = encode(base, tokens, { extraArgs: extra });
    return { detail: extra.endsWith(': null') ? `argument ${first} twice` : `argument ${extra}`, expect: 'reject', request };
  },
  unknownField: (rng, base, tokens) => {
    const extra = pick(rng, ['bogus', '__proto__', 'constructor']);
    return { detail: `selection ${extra}`, expect: 'reject', request: encode(base, tokens, { extraSelection: ` ${extra}` }) };
  },
  undeclaredVariable: (rng, base, tokens) => {
    const names = Object.keys(base.args);
    if (names.length === 0)
      return { detail: 'undeclared $nope', expect: 'reject', request: encode(base, tokens, { extraArgs: 'bogus: $nope' }) };
    const name = pick(rng, names);
    const rest = { ...base.args };
    delete rest[name];
    return {
      detail: `$${name} used but not declared`,
      expect: 'reject',
      request: encode(base, tokens, { args: rest, extraArgs: `${name}: $${name}` }),
    };
  },
  variableType: (rng, base, tokens) => {
    const names = Object.keys(base.args);
    if (names.length === 0) return null;
    const name = pick(rng, names);
    const own = (topFieldOf(base, name)?.gqlType ?? 'String').replace(/[[\]!]/g, '');
    const type = pick(
      rng,
      ['Int', 'Boolean', '[String]', 'Float', 'ID', 'NoSuchType', 'String!!'].filter((t) => t.replace(/[[\]!]/g, '') !== own),
    );
    return { detail: `$${name} declared ${type}`, expect: 'reject', request: encode(base, tokens, { varTypes: { [name]: type } }) };
  },
  variablesNotObject: (rng, base, tokens) => {
    const { query } = graphqlParts(base);
    const variables = pick(rng, [42, 'x', [1], true, '{"a":1}']);
    return {
      detail: `variables ${JSON.stringify(variables)}`,
      expect: base.op === 'mutation' ? 'refuse' : 'any',
      request: postJson(base.path, { query, variables, operationName: 'Fuzz' }, tokens.all),
    };
  },
  deepVariable: (rng, base, tokens) => {
    const names = Object.keys(base.args);
    if (names.length === 0) return null;
    const name = pick(rng, names);
    const shape = pick(rng, ['arrays', 'objects'] as const);
    const depth = pick(rng, [3000, 20000]);
    return {
      detail: `$${name}: ${depth} nested ${shape}`,
      expect: 'refuse',
      request: encode(base, tokens, { args: { ...base.args, [name]: deep(shape, depth) } }),
    };
  },
  deepDocument: (rng, base, tokens) => {
    const depth = pick(rng, [500, 5000]);
    const [detail, query] = pick(rng, [
      [`selection nested ${depth} deep`, `query Fuzz { __typename ${'{ a '.repeat(depth)}${'}'.repeat(depth)} }`],
      [
        `list literal nested ${depth * 4} deep`,
        `query Fuzz { __type(name: ${'['.repeat(depth * 4)}"Query"${']'.repeat(depth * 4)}) { name } }`,
      ],
    ]);
    return { detail, expect: 'reject', request: postJson(base.path, { query }, tokens.all) };
  },
  fragmentCycle: (rng, base, tokens) => {
    const n = pick(rng, [1, 2, 3]);
    const fragments = Array.from({ length: n }, (_, i) => `fragment C${i} on Query { __typename ...C${(i + 1) % n} }`);
    return {
      detail: `cycle of ${n} fragments`,
      expect: 'reject',
      request: postJson(base.path, { query: `query Fuzz { ...C0 } ${fragments.join(' ')}` }, tokens.all),
    };
  },
  deepFragments: (rng, base, tokens) => {
    const depth = pick(rng, [20, 30, 60]);
    const style = pick(rng, ['named', 'named', 'inline', 'plain'] as const);
    const chain = base.surface === 'api' && rng() < 0.5 ? 'accounts' : 'introspection';
    const query = deepSelection(depth, style, chain);
    return {
      detail: `${depth} levels of ${chain} (${style === 'plain' ? 'no fragments' : `${style} fragments`})`,
      expect: 'reject',
      request: postJson(base.path, { query }, tokens.all),
    };
  },
  manyAliases: (rng, base, tokens) => {
    // The expensive variants run alone and rarely: when the cost limit is missing they load the service for long.
    const heavy = rng() < 0.15;
    if (heavy) {
      const field =
        base.surface === 'api'
          ? 'allTransactions(perPage: 1000) { account { id } }'
          : 'authorization(account_tag: "alice", destination: "393331234567") { authorized }';
      return {
        detail: `1000 aliases of ${field.split('(')[0]}`,
        expect: 'reject',
        exclusive: true,
        request: postJson(base.path, { query: aliases(1000, field) }, tokens.all),
      };
    }
    const n = pick(rng, [2000, 5000]);
    return {
      detail: `${n} aliases of __typename`,
      expect: 'reject',
      request: postJson(base.path, { query: aliases(n, '__typename') }, tokens.all),
    };
  },
};

// ============================================================================ a case

/**
 * Case `index` of a run with `seed`: a base request of a surface chosen in turn, then a value
 * mutator (a bit over half of the time) or a request mutator.
 */
export function makeCase(seed: number, index: number, table: Base[], tokens: Tokens): Case {
  const rng = seededRng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const surface = (['api', 'agent-gql', 'agent-rest'] as const)[index % 3];
  const base = pick(
    rng,
    table.filter((b) => b.surface === surface),
  );
  if (base.fields.length > 0 && rng() < 0.55) return valueCase(rng, index, base, tokens);
  const mutators = { ...HTTP_MUTATORS, ...(surface === 'agent-rest' ? REST_MUTATORS : GRAPHQL_MUTATORS) };
  for (;;) {
    const name = pick(rng, Object.keys(mutators));
    const built = mutators[name](rng, base, tokens);
    if (!built) continue;
    return {
      index,
      base,
      mutator: name,
      detail: built.detail,
      expect: built.expect,
      exclusive: built.exclusive ?? false,
      request: built.request,
      shown: showRequest(built.request, tokens),
    };
  }
}
