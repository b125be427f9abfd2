import { validate, type Input } from '../../../src/agent/operations';
import { validateRecordLine } from '../../../src/agent/record-batch';
import { readAccountCreate } from '../../../src/api/graphql/accounts/input';
import { readCarrierCreate } from '../../../src/api/graphql/carriers/input';
import { readPricelistCreate } from '../../../src/api/graphql/pricelists/input';
import { readRateCreate } from '../../../src/api/graphql/rates/input';
import { readTransactionCreate } from '../../../src/api/graphql/transactions/input';
import { csvLine, jsonLine } from '../../../src/cli/import/line';
import { ServiceError } from '../../../src/shared/infra/errors';

/**
 * The same field accepts the same values on every surface: the API's readers, the agent's operations,
 * recordTransactions items and CDR import lines (CSV and JSON lines) all refuse a hostile value with
 * BAD_USER_INPUT naming the field.
 */

const now = new Date('2026-02-01T00:00:00Z');

/** Values every text field refuses, by what is wrong with them. */
const HOSTILE: Record<string, string> = {
  NUL: 'a\u0000b',
  ESC: 'a\u001b[31mb',
  'CR LF': 'a\r\nb',
  DEL: 'a\u007fb',
  'C1 (U+0085)': 'a\u0085b',
  'C1 (U+009B)': 'a\u009bb',
  'line separator': 'a\u2028b',
  'lone high surrogate': 'a\ud800b',
  'lone low surrogate': 'a\udc00b',
  'leading space': ' ab',
  'trailing space': 'ab ',
};

const call = {
  transaction_tag: 't1',
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

function refusedField(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'BAD_USER_INPUT') return String(err.details.field);
    throw err;
  }
  throw new Error('accepted');
}

const agentSurfaces: Array<[string, (input: Input) => unknown]> = [
  ['begin', (i) => validate.begin(i, now, 0)],
  ['record', (i) => validate.record(i, now, 0)],
  ['recordTransactions item', (i) => validateRecordLine(i, 0, now)],
];

/** A CSV cell cannot hold a list: tags are written `a;b`. CSV cells are trimmed (the file format), so padding is not hostile there. */
function csvReason(field: string, value: string | string[]): string | null {
  const cell = Array.isArray(value) ? value.join(';') : value;
  const row = Object.fromEntries(Object.entries(call).map(([k, v]) => [k, Array.isArray(v) ? v.join(';') : v]));
  const outcome = csvLine({ ...row, [field]: cell }, 2, now);
  return outcome.ok ? null : outcome.reason;
}

describe('one validation for every surface', () => {
  const callFields = ['transaction_tag', 'account_tag', 'source', 'destination', 'source_ip', 'carrier_ip', 'destination_account_tag'];

  for (const [what, value] of Object.entries(HOSTILE)) {
    it(`agent, recordTransactions and CDR lines refuse ${what} in every call field, naming it`, () => {
      for (const field of [...callFields, 'tags']) {
        const input = { ...call, [field]: field === 'tags' ? ['ok', value] : value };
        for (const [surface, run] of agentSurfaces) {
          expect({ surface, field, refused: refusedField(() => run(input)) }).toEqual({ surface, field, refused: field });
        }
        expect(jsonLine(JSON.stringify(input), 2, now)).toEqual({
          ok: false,
          reason: expect.stringMatching(new RegExp(`^BAD_USER_INPUT: ${field}: `)),
        });
        if (!/space/.test(what))
          expect(csvReason(field, input[field as keyof typeof input] as string)).toMatch(new RegExp(`^BAD_USER_INPUT: ${field}: `));
      }
      for (const field of ['transaction_tag', 'account_tag']) {
        for (const op of ['end', 'rollback'] as const) {
          expect(refusedField(() => validate[op]({ transaction_tag: 't1', account_tag: 'alice', [field]: value }, now, 0))).toBe(field);
        }
      }
      for (const field of ['transaction_tag', 'account_tag', 'destination_account_tag', 'source', 'destination']) {
        expect(refusedField(() => validate.authorization({ account_tag: 'alice', destination: '4930222', [field]: value }, now, 0))).toBe(
          field,
        );
      }
    });

    it(`the API refuses ${what} in every text field, naming it`, () => {
      const account = { account_tag: 'alice' };
      const cases: Array<[string, () => unknown]> = [
        ...['account_tag', 'name', 'notification_email', 'notification_mobile', 'customer_tag'].map((f): [string, () => unknown] => [
          f,
          () => readAccountCreate({ ...account, [f]: value }),
        ]),
        ...['carrier_tags', 'carrier_tags_override', 'pricelist_tags', 'tags', 'linked_accounts'].map((f): [string, () => unknown] => [
          f,
          () => readAccountCreate({ ...account, [f]: ['ok', value] }),
        ]),
        ['carrier_tag', () => readCarrierCreate({ carrier_tag: value, host: '10.0.0.1', port: 5060 })],
        ['host', () => readCarrierCreate({ carrier_tag: 'c', host: value, port: 5060 })],
        ['pricelist_tag', () => readPricelistCreate({ pricelist_tag: value, currency: 'USD' })],
        ['name', () => readPricelistCreate({ pricelist_tag: 'p', name: value, currency: 'USD' })],
        ['prefix', () => readRateCreate({ pricelist_tag: 'p', carrier_tag: 'c', prefix: value, rate: 1 })],
        ['description', () => readRateCreate({ pricelist_tag: 'p', carrier_tag: 'c', prefix: '44', rate: 1, description: value })],
        ['pricelist_tag', () => readRateCreate({ pricelist_tag: value, carrier_tag: 'c', prefix: '44', rate: 1 })],
        ...['transaction_tag', 'account_tag', 'source', 'destination', 'source_ip', 'carrier_ip', 'unauthorized_reason'].map(
          (f): [string, () => unknown] => [f, () => readTransactionCreate({ transaction_tag: 't', account_tag: 'a', [f]: value })],
        ),
        ['tags', () => readTransactionCreate({ transaction_tag: 't', account_tag: 'a', tags: [value] })],
        [
          'destination_rate.carrier_tag',
          () =>
            readTransactionCreate({
              transaction_tag: 't',
              account_tag: 'a',
              destination_rate: { pricelist_tag: 'p', carrier_tag: value, prefix: '4', rate: 1 },
            }),
        ],
      ];
      for (const [field, run] of cases) expect({ field, refused: refusedField(run) }).toEqual({ field, refused: field });
    });
  }

  it('the agent refuses what the API refuses for the same field (tags of 200 characters, padded tags, repeats)', () => {
    for (const tags of [['x'.repeat(200)], [' vip '], ['vip', 'vip'], Array.from({ length: 101 }, (_, i) => `t${i}`)]) {
      expect(refusedField(() => readTransactionCreate({ transaction_tag: 't', account_tag: 'a', tags }))).toBe('tags');
      for (const [, run] of agentSurfaces) expect(refusedField(() => run({ ...call, tags }))).toBe('tags');
    }
    expect(refusedField(() => validate.begin({ ...call, transaction_tag: 'x'.repeat(129) }, now, 0))).toBe('transaction_tag');
    expect(refusedField(() => readTransactionCreate({ transaction_tag: 'x'.repeat(129), account_tag: 'a' }))).toBe('transaction_tag');
  });

  it('accepts the same good values on the agent and the API', () => {
    expect(validate.record(call, now, 0)).toMatchObject({ source_ip: '192.0.2.1', carrier_ip: '10.0.0.1:5060', tags: ['night'] });
    expect(readTransactionCreate({ ...call, timestamp_begin: undefined, timestamp_end: undefined })).toMatchObject({
      source_ip: '192.0.2.1',
      carrier_ip: '10.0.0.1:5060',
      tags: ['night'],
    });
  });

  it('an empty optional agent field is absent; an empty required one is refused', () => {
    expect(validate.begin({ ...call, source_ip: '', carrier_ip: '', destination_account_tag: '' }, now, 0)).toMatchObject({
      source_ip: null,
      carrier_ip: null,
      destination_account_tag: null,
    });
    expect(refusedField(() => validate.begin({ ...call, account_tag: '' }, now, 0))).toBe('account_tag');
  });
});
