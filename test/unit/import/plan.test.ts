import type { ImportLine } from '../../../src/shared/domain/queues/payloads';
import { RatingIndex } from '../../../src/shared/domain/rating';
import type { BatchAccount } from '../../../src/workers/imports/accounts';
import { importRecordId, opIds } from '../../../src/shared/domain/ledger';
import { planBatch } from '../../../src/workers/imports/plan';
import { carrier, rate } from '../../support/seed';

const index = RatingIndex.build([rate('pl', 'c1', '49', { rate: 60, rate_increment: 1 })], [carrier('c1', { host: '10.0.0.1' })]);
const acct = (tag: string, extra: Partial<BatchAccount> = {}): [string, BatchAccount] => [
  tag,
  {
    account_tag: tag,
    active: true,
    pricelist_tags: ['pl'],
    carrier_tags: null,
    carrier_tags_override: null,
    linked_accounts: [],
    ledger_rev: 1,
    ...extra,
  },
];
const accounts = new Map([
  acct('a'),
  acct('b', { linked_accounts: ['p'] }),
  acct('p', { linked_accounts: ['b'] }),
  acct('off', { active: false }),
  acct('r', { pricelist_tags: [] }),
]);
const line = (n: number, tag: string, account: string, extra: Partial<ImportLine> = {}): ImportLine => ({
  line: n,
  transaction_tag: tag,
  account_tag: account,
  source: '1',
  destination: '4930',
  source_ip: null,
  carrier_ip: null,
  tags: null,
  destination_account_tag: null,
  timestamp_auth: null,
  timestamp_begin: '2026-01-01T00:00:00.000Z',
  timestamp_end: '2026-01-01T00:00:10.500Z',
  ...extra,
});

describe('planBatch (rating a batch in memory)', () => {
  it('rates each party, refuses like recordTransaction, and keeps the first line of a call', () => {
    const plans = planBatch(
      [
        line(1, 't1', 'a'),
        line(2, 't1', 'a'), // same call again
        line(3, 't2', 'ghost'),
        line(4, 't3', 'off'),
        line(5, 't4', 'a', { destination: '33' }),
        line(6, 't5', 'b', { destination_account_tag: 'r' }), // linked p (cycle back to b cut), inbound r
      ],
      accounts,
      index,
      'imp/x/0',
    );
    expect(plans.map((p) => p.kind)).toEqual(['planned', 'duplicate', 'refused', 'refused', 'refused', 'planned']);
    expect(plans[2]).toEqual({ kind: 'refused', reason: 'NOT_FOUND', account_tag: 'ghost' });
    expect(plans[3]).toEqual({ kind: 'refused', reason: 'NOT_ACTIVE', account_tag: 'off' });
    expect(plans[4]).toEqual({ kind: 'refused', reason: 'UNREACHABLE_DESTINATION', account_tag: 'a' });
    const first = plans[0];
    if (first.kind !== 'planned') throw new Error('planned');
    expect(first.caller.doc).toMatchObject({
      _id: importRecordId('imp/x/0', 'a', 'a', 't1'),
      origin_account_tag: 'a',
      charge_op: 'imp/x/0',
      fee: 11n,
      duration: 11,
      state: 'imported',
      carrier_ip: '10.0.0.1:5060',
    });
    const linked = plans[5];
    if (linked.kind !== 'planned') throw new Error('planned');
    expect(linked.others.map((o) => [o.doc.account_tag, o.inbound, o.doc.fee])).toEqual([
      ['p', false, 11n],
      ['r', true, 0n],
    ]);
    expect(linked.caller.doc.call_parties).toEqual(['b', 'p', 'r']);
  });

  it('derives the same record ids for the same batch, and different ones for another batch or caller', () => {
    expect(importRecordId('imp/x/0', 'a', 'a', 't1')).toBe(importRecordId('imp/x/0', 'a', 'a', 't1'));
    expect(importRecordId('imp/x/0', 'a', 'a', 't1')).not.toBe(importRecordId('imp/x/1', 'a', 'a', 't1'));
    // A parent's records of two children's calls with one tag are two records.
    expect(importRecordId('imp/x/0', 'p', 'a', 't1')).not.toBe(importRecordId('imp/x/0', 'p', 'b', 't1'));
    expect(importRecordId('imp/x/0', 'a', 'a', 't1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('keeps the record ids of earlier versions: a batch retried after an upgrade must find the records it wrote', () => {
    expect(importRecordId('imp/x/0', 'a', 'a', 't1')).toBe('50ee7bfd-05ea-581a-8d50-f26e1c623d46');
    expect(importRecordId('imp/f8f196847151d7dd7defc5591/12', 'acc42', 'acc7', 'sw1-123456')).toBe('bebe1732-4d14-5fac-86ff-07a93aef9888');
    expect(importRecordId('imp/x/3', 'kunde-ä', 'kunde-ä', 'анруф-1\u{1F4DE}')).toBe('99b3d407-2907-5934-b56d-630daed51e44');
  });

  it('names each batch debit of each account once, in the ledger', () => {
    expect(opIds.importDebit('imp/x/0', 'a')).toBe(opIds.importDebit('imp/x/0', 'a'));
    expect(opIds.importDebit('imp/x/0', 'a')).not.toBe(opIds.importDebit('imp/x/1', 'a'));
    expect(opIds.importDebit('imp/x/0', 'a')).not.toBe(opIds.importDebit('imp/x/0', 'b'));
  });
});
