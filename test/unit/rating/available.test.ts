import type { RateSnapshot, RunningTransaction } from '../../../src/shared/domain/types';
import { availableBalance, runningCost } from '../../../src/shared/domain/rating';

const T0 = Date.UTC(2024, 5, 1, 8, 0, 0);
const at = (ms: number) => new Date(T0 + ms);

const RATE: RateSnapshot = {
  pricelist_tag: 'retail',
  carrier_tag: 'a',
  prefix: '44',
  connect_fee: 0,
  rate: 20,
  rate_increment: 60,
  interval_start: 0,
};

function entry(over: Partial<RunningTransaction>): RunningTransaction {
  return {
    transaction_tag: 't',
    id: 'entry-t',
    origin_account_tag: 'caller',
    call_id: 'caller/t',
    source: '100',
    destination: '4420',
    carrier_ip: '10.0.0.1:5060',
    rate: RATE,
    in_progress: true,
    inbound: false,
    timestamp_begin: at(0),
    timestamp_end: null,
    ...over,
  };
}

describe('runningCost', () => {
  test.each<[string, RunningTransaction, Date, bigint]>([
    ['in progress, 38 s so far', entry({}), at(38_000), 20n],
    ['in progress, 60.001 s so far', entry({}), at(60_001), 40n],
    ['in progress, not started yet', entry({}), at(-5_000), 0n],
    ['in progress, at its begin', entry({}), at(0), 0n],
    ['ended after 38 s, rated to its end not to now', entry({ in_progress: false, timestamp_end: at(38_000) }), at(3_600_000), 20n],
    ['ended before it began', entry({ in_progress: false, timestamp_end: at(-1) }), at(10_000), 0n],
    ['in_progress flag lagging behind a known end', entry({ in_progress: true, timestamp_end: at(38_000) }), at(600_000), 20n],
    ['inbound without a rate', entry({ inbound: true, rate: null, carrier_ip: '' }), at(600_000), 0n],
    ['inbound with a rate is charged', entry({ inbound: true }), at(38_000), 20n],
    ['connect fee counted once started', entry({ rate: { ...RATE, connect_fee: 7 } }), at(1), 27n],
  ])('%s', (_name, e, now, expected) => {
    expect(runningCost(e, now)).toBe(expected);
  });
});

describe('availableBalance', () => {
  test('no running transactions leaves the balance', () => {
    expect(availableBalance(100n, [], at(0))).toBe(100n);
  });

  test('subtracts in-progress and ended entries, ignores unrated inbound', () => {
    const running = [
      entry({ transaction_tag: 'a' }), // 120 s so far -> 40
      entry({ transaction_tag: 'b', in_progress: false, timestamp_end: at(38_000) }), // 20
      entry({ transaction_tag: 'c', inbound: true, rate: null }), // 0
      entry({ transaction_tag: 'd', timestamp_begin: at(60_000), rate: { ...RATE, connect_fee: 5 } }), // 60 s -> 25
    ];
    expect(availableBalance(100n, running, at(120_000))).toBe(100n - 40n - 20n - 25n);
  });

  test('may go negative', () => {
    expect(availableBalance(10n, [entry({})], at(61_000))).toBe(-30n);
  });

  test('exact beyond 2^53', () => {
    const big = entry({ rate: { ...RATE, rate: Number.MAX_SAFE_INTEGER, rate_increment: 1 } });
    expect(availableBalance(10n ** 20n, [big], at(61_000))).toBe(10n ** 20n - 9157319242320008n);
  });
});
