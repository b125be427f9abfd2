import { ApiHarness, expectError, startApi } from './api-harness';

/** Issue 34: timings on rates, pricelist time zones, the holiday calendar, through the management API. */
describe('API rate timings, time zones and holidays', () => {
  let api: ApiHarness;
  const TIMING = 'timing { days start end holidays }';

  beforeAll(async () => {
    api = await startApi();
    await api.ok(`mutation {
      p: createPricelist(pricelist_tag: "pl", currency: USD, time_zone: "Europe/Rome") { id }
      c: createCarrier(carrier_tag: "cr", host: "h", port: 5060) { id }
    }`);
  });

  afterAll(async () => {
    await api.close();
  });

  it('a pricelist keeps its time zone; an unknown zone is refused and changes nothing', async () => {
    expect((await api.ok('{ Pricelist(pricelist_tag: "pl") { time_zone } }')).Pricelist).toEqual({ time_zone: 'Europe/Rome' });
    expectError(await api.gql('mutation { updatePricelist(tag: "pl", time_zone: "Mars/Olympus") { id } }'), 'BAD_USER_INPUT', 'time_zone');
    expect((await api.ok('{ Pricelist(pricelist_tag: "pl") { time_zone } }')).Pricelist).toEqual({ time_zone: 'Europe/Rome' });
  });

  it('one prefix holds a base rate and a peak rate; the key names the base rate; a second peak with the same timing is a duplicate', async () => {
    const base = await api.ok(
      `mutation { createPricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "39", rate: 60) { id ${TIMING} } }`,
    );
    expect(base.createPricelistRate.timing).toBeNull();
    const peak = await api.ok(
      `mutation { createPricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "39", rate: 600, timing: { days: [5, 1, 2, 3, 4], start: "18:00:00", end: "22:00:00" }) { id ${TIMING} } }`,
    );
    expect(peak.createPricelistRate.timing).toEqual({ days: [1, 2, 3, 4, 5], start: '18:00:00', end: '22:00:00', holidays: null });
    expectError(
      await api.gql(
        'mutation { createPricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "39", rate: 1, timing: { days: [1, 2, 3, 4, 5], start: "18:00:00", end: "22:00:00" }) { id } }',
      ),
      'DUPLICATE',
    );
    const byKey = await api.ok('{ PricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "39") { id rate } }');
    expect(byKey.PricelistRate).toEqual({ id: base.createPricelistRate.id, rate: 60 });
    const list = await api.ok('{ allPricelistRates(filter: { prefix: "39" }) { rate } }');
    expect(list.allPricelistRates.map((r: { rate: number }) => r.rate).sort((a: number, b: number) => a - b)).toEqual([60, 600]);
    // timing: null makes the peak untimed: it would then clash with the base rate's key.
    expectError(await api.gql(`mutation { updatePricelistRate(id: "${peak.createPricelistRate.id}", timing: null) { id } }`), 'DUPLICATE');
    const moved = await api.ok(
      `mutation { updatePricelistRate(id: "${peak.createPricelistRate.id}", timing: { days: [6, 7] }) { ${TIMING} } }`,
    );
    expect(moved.updatePricelistRate.timing).toEqual({ days: [6, 7], start: null, end: null, holidays: null });
  });

  it.each([
    ['a day out of range', '{ days: [0] }', 'timing.days'],
    ['a start without an end', '{ start: "08:00:00" }', 'timing.start and end'],
    ['a malformed time', '{ start: "8:00", end: "18:00:00" }', 'timing.start'],
    ['a timing that says nothing', '{ days: [1, 2, 3, 4, 5, 6, 7] }', 'timing'],
  ])('refuses %s, and stores nothing', async (_what, timing, field) => {
    const before = (await api.ok('{ _allPricelistRatesMeta { count } }'))._allPricelistRatesMeta.count;
    expectError(
      await api.gql(
        `mutation { createPricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "49", rate: 1, timing: ${timing}) { id } }`,
      ),
      'BAD_USER_INPUT',
      field,
    );
    expect((await api.ok('{ _allPricelistRatesMeta { count } }'))._allPricelistRatesMeta.count).toBe(before);
  });

  it('holidays: created, listed, unique by date, bad dates refused', async () => {
    await api.ok('mutation { createHoliday(date: "2026-12-25", name: "Christmas") { id } }');
    await api.ok('mutation { createHoliday(date: "2026-01-06", name: "Epiphany") { id } }');
    expectError(await api.gql('mutation { createHoliday(date: "2026-12-25") { id } }'), 'DUPLICATE');
    expectError(await api.gql('mutation { createHoliday(date: "2026-02-30") { id } }'), 'BAD_USER_INPUT', 'date');
    const list = await api.ok(
      '{ allHolidays(filter: { date_gte: "2026-06-01" }, sortField: "date") { date name } _allHolidaysMeta { count } }',
    );
    expect(list.allHolidays).toEqual([{ date: '2026-12-25', name: 'Christmas' }]);
    expect(list._allHolidaysMeta.count).toBe(2);
    await api.ok('mutation { deleteHoliday(date: "2026-01-06") { id } }');
    expect((await api.ok('{ _allHolidaysMeta { count } }'))._allHolidaysMeta.count).toBe(1);
  });
});
