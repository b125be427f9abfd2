import { accountQuery } from '../../../src/api/store/accounts';
import { carrierQuery } from '../../../src/api/store/carriers';
import { allOf, matchAny, rangeConditions } from '../../../src/api/store/query';
import { checkValidityWindow } from '../../../src/api/store/rates';
import { transactionQuery } from '../../../src/api/store/transactions';
import { ServiceError } from '../../../src/shared/infra/errors';

describe('filter to query', () => {
  it('adds nothing for omitted or null members', () => {
    expect(carrierQuery({})).toEqual({});
    expect(carrierQuery({ id: null, ids: null, carrier_tag: null, active: null })).toEqual({});
    expect(allOf([{ a: 1 }])).toEqual({ a: 1 });
  });

  it('matches one value or any of a list', () => {
    expect(matchAny('t', ['x'])).toEqual([{ t: 'x' }]);
    expect(matchAny('t', ['x', 'y'])).toEqual([{ t: { $in: ['x', 'y'] } }]);
    expect(matchAny('t', 'x')).toEqual([{ t: 'x' }]);
    expect(carrierQuery({ ids: ['a'], carrier_tag: ['c'], active: false })).toEqual({
      $and: [{ _id: { $in: ['a'] } }, { carrier_tag: 'c' }, { active: false }],
    });
  });

  it('builds ranges from _gte/_gt/_lte/_lt members', () => {
    const from = new Date(0);
    const to = new Date(1000);
    expect(rangeConditions('ts', 'ts', { ts_gte: from, ts_lt: to, ts_gt: null })).toEqual([{ ts: { $gte: from, $lt: to } }]);
    expect(transactionQuery({ account_tag: ['a'], timestamp_begin_lte: to })).toEqual({
      $and: [{ account_tag: 'a' }, { timestamp_begin: { $lte: to } }],
    });
  });

  it('turns the running-transaction filters into conditions on running_transactions', () => {
    const cutoff = new Date(5000);
    expect(accountQuery({ with_running_transactions: true }, cutoff)).toEqual({ 'running_transactions.0': { $exists: true } });
    expect(accountQuery({ with_running_transactions: false }, cutoff)).toEqual({ 'running_transactions.0': { $exists: false } });
    const long = { running_transactions: { $elemMatch: { in_progress: true, timestamp_begin: { $lt: cutoff } } } };
    expect(accountQuery({ with_long_running_transactions: true }, cutoff)).toEqual(long);
    expect(accountQuery({ with_long_running_transactions: false }, cutoff)).toEqual({ $nor: [long] });
  });
});

describe('rate validity window', () => {
  it('requires the end after the start when both are set', () => {
    expect(() => checkValidityWindow({ datetime_start: null, datetime_end: new Date(0) })).not.toThrow();
    expect(() => checkValidityWindow({ datetime_start: new Date(0), datetime_end: new Date(1) })).not.toThrow();
    expect(() => checkValidityWindow({ datetime_start: new Date(1), datetime_end: new Date(1) })).toThrow(ServiceError);
  });
});
