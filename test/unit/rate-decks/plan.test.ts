import { Readable } from 'node:stream';
import type { PricelistRateDoc, RateTiming, RateVersion } from '../../../src/shared/domain/types';
import {
  applyDeck,
  cutAt,
  deckRateName,
  docName,
  planLine,
  planRemoval,
  rateName,
  sameState,
  versionAt,
  type DeckRate,
} from '../../../src/shared/domain/rate-decks';
import { timingKey } from '../../../src/shared/domain/rating/timing';

const d = (iso: string) => new Date(`${iso}T00:00:00Z`);
const T = d('2026-07-01');
const target = { pricelist_tag: 'pl', carrier_tag: 'cr', newId: () => 'new-id' };

const line = (rate: number, extra: Partial<DeckRate> = {}): DeckRate => ({
  prefix: '44',
  connect_fee: 0,
  rate,
  rate_increment: 1,
  interval_start: 0,
  description: null,
  ...extra,
});

const version = (rate: number, start: Date | null, end: Date | null): RateVersion => ({
  datetime_start: start,
  datetime_end: end,
  connect_fee: 0,
  rate,
  rate_increment: 1,
  interval_start: 0,
  description: null,
});

const doc = (current: RateVersion, previous: RateVersion[] = []): PricelistRateDoc => ({
  _id: 'id1',
  pricelist_tag: 'pl',
  carrier_tag: 'cr',
  prefix: '44',
  ...current,
  previous_versions: previous,
});

describe('planLine', () => {
  it('adds a prefix without a document, valid from T on', () => {
    const plan = planLine(null, line(12, { description: 'UK' }), T, target);
    expect(plan.verdict).toBe('added');
    expect(plan.doc).toEqual({ ...doc({ ...version(12, T, null), description: 'UK' }), _id: 'new-id' });
  });

  it('leaves a prefix whose version at T has the same terms and no end', () => {
    expect(planLine(doc(version(12, null, null)), line(12), T, target)).toEqual({ verdict: 'unchanged', doc: null });
    expect(planLine(doc(version(12, d('2026-01-01'), null)), line(12), T, target).verdict).toBe('unchanged');
    expect(planLine(doc(version(12, T, null)), line(12), T, target).verdict).toBe('unchanged');
  });

  it('changes a prefix whose terms differ: the old version ends at T, the new one starts there', () => {
    const before = doc(version(10, d('2026-01-01'), null), [version(8, null, d('2026-01-01'))]);
    const plan = planLine(before, line(12), T, target);
    expect(plan.verdict).toBe('changed');
    expect(plan.doc).toEqual(doc(version(12, T, null), [version(8, null, d('2026-01-01')), version(10, d('2026-01-01'), T)]));
  });

  it.each([
    ['another description', line(10, { description: 'new' })],
    ['another connect fee', line(10, { connect_fee: 1 })],
    ['another increment', line(10, { rate_increment: 60 })],
    ['another interval start', line(10, { interval_start: 5 })],
  ])('counts %s as a change', (_name, l) => {
    expect(planLine(doc(version(10, null, null)), l, T, target).verdict).toBe('changed');
  });

  it('changes a prefix with the same terms but an end (the end is lifted from T on)', () => {
    const plan = planLine(doc(version(12, null, d('2026-09-01'))), line(12), T, target);
    expect(plan.verdict).toBe('changed');
    expect(plan.doc).toEqual(doc(version(12, T, null), [version(12, null, T)]));
  });

  it('drops versions starting at or after T and trims the one running over it', () => {
    // A later deck (effective 2026-08-01) ran first; this one is effective earlier.
    const before = doc(version(20, d('2026-08-01'), null), [version(10, null, d('2026-08-01'))]);
    const plan = planLine(before, line(15), T, target);
    expect(plan.verdict).toBe('changed');
    expect(plan.doc).toEqual(doc(version(15, T, null), [version(10, null, T)]));
  });

  it('keeps the end of a version that ended before T', () => {
    const plan = planLine(doc(version(10, null, d('2026-02-01'))), line(10), T, target);
    expect(plan.doc).toEqual(doc(version(10, T, null), [version(10, null, d('2026-02-01'))]));
  });

  it('is idempotent: the planned document plans as unchanged', () => {
    const before = doc(version(10, d('2026-01-01'), null));
    const first = planLine(before, line(12), T, target);
    expect(planLine(first.doc, line(12), T, target)).toEqual({ verdict: 'unchanged', doc: null });
  });

  it('reads a document without previous_versions (written before decks existed)', () => {
    const before = doc(version(10, null, null));
    delete before.previous_versions;
    expect(planLine(before, line(12), T, target).doc?.previous_versions).toEqual([version(10, null, T)]);
  });
});

describe('planRemoval', () => {
  it('ends a current version that is valid at T', () => {
    expect(planRemoval(doc(version(10, null, null)), T)).toEqual({ kind: 'replace', doc: doc(version(10, null, T)) });
    expect(planRemoval(doc(version(10, null, d('2026-09-01'))), T)).toEqual({ kind: 'replace', doc: doc(version(10, null, T)) });
  });

  it('drops a current version starting at or after T: the previous one is current again', () => {
    const before = doc(version(20, T, null), [version(8, null, d('2026-01-01')), version(10, d('2026-01-01'), T)]);
    expect(planRemoval(before, T)).toEqual({
      kind: 'replace',
      doc: doc(version(10, d('2026-01-01'), T), [version(8, null, d('2026-01-01'))]),
    });
  });

  it('deletes a document with no version before T', () => {
    expect(planRemoval(doc(version(20, T, null)), T)).toEqual({ kind: 'delete' });
    expect(planRemoval(doc(version(20, d('2026-08-01'), null)), T)).toEqual({ kind: 'delete' });
  });

  it('leaves a rate that already ended at or before T', () => {
    expect(planRemoval(doc(version(10, null, T)), T)).toEqual({ kind: 'none' });
    expect(planRemoval(doc(version(10, null, d('2026-02-01'))), T)).toEqual({ kind: 'none' });
  });

  it('is idempotent', () => {
    const first = planRemoval(doc(version(10, null, null)), T);
    expect(first.kind).toBe('replace');
    if (first.kind === 'replace') expect(planRemoval(first.doc, T)).toEqual({ kind: 'none' });
  });
});

describe('helpers', () => {
  it('versionAt picks the version whose window holds the time (start inclusive, end exclusive)', () => {
    const x = doc(version(12, T, null), [version(10, null, T)]);
    expect(versionAt(x, new Date(T.getTime() - 1))?.rate).toBe(10);
    expect(versionAt(x, T)?.rate).toBe(12);
  });

  it('cutAt keeps what came before the time', () => {
    expect(cutAt([version(1, null, d('2026-01-01')), version(2, d('2026-01-01'), null)], T)).toEqual([
      version(1, null, d('2026-01-01')),
      version(2, d('2026-01-01'), T),
    ]);
    expect(cutAt([version(1, T, null)], T)).toEqual([]);
  });

  it('sameState compares keys and every version, not object identity', () => {
    const a = doc(version(12, T, null), [version(10, null, T)]);
    expect(sameState(a, structuredClone(a))).toBe(true);
    expect(sameState(a, doc(version(12, T, null)))).toBe(false);
    expect(sameState(a, { ...a, _id: 'other' })).toBe(false);
    expect(sameState(null, null)).toBe(true);
    expect(sameState(a, null)).toBe(false);
  });
});

describe('timed rates', () => {
  const peak: RateTiming = { days: [1, 2, 3, 4, 5], start: '08:00:00', end: '18:00:00', holidays: null };
  const peakKey = timingKey(peak)!;
  const timedDoc = (current: RateVersion, previous: RateVersion[] = []): PricelistRateDoc => ({
    _id: 'peak-id',
    pricelist_tag: 'pl',
    carrier_tag: 'cr',
    prefix: '44',
    timing_key: peakKey,
    ...current,
    timing: peak,
    previous_versions: previous.map((v) => ({ ...v, timing: peak })),
  });

  it('names a rate by its prefix and timing key; an untimed one by its prefix alone', () => {
    expect(rateName('44', null)).toBe('44');
    expect(deckRateName(line(1))).toBe('44');
    expect(docName(doc(version(1, null, null)))).toBe('44');
    expect(deckRateName(line(1, { timing: peak }))).toBe(`44 ${peakKey}`);
    expect(docName(timedDoc(version(1, null, null)))).toBe(`44 ${peakKey}`);
    // Another spelling of the same timing names the same rate.
    expect(deckRateName(line(1, { timing: { ...peak, days: [5, 4, 3, 2, 1] } }))).toBe(`44 ${peakKey}`);
  });

  it('adds a timed document with its timing and key, an untimed one with neither', () => {
    const timed = planLine(null, line(30, { timing: { ...peak, days: [5, 1, 2, 4, 3] } }), T, target);
    expect(timed).toEqual({ verdict: 'added', doc: { ...timedDoc({ ...version(30, T, null) }), _id: 'new-id' } });
    const untimed = planLine(null, line(10), T, target).doc!;
    expect(untimed).not.toHaveProperty('timing_key');
    expect(untimed).not.toHaveProperty('timing');
  });

  it('replaces only the peak version: the base document plans unchanged, the peak one keeps its timing on every version', () => {
    const base = doc(version(10, d('2026-01-01'), null));
    const peakBefore = timedDoc(version(30, d('2026-01-01'), null));
    expect(planLine(base, line(10), T, target)).toEqual({ verdict: 'unchanged', doc: null });
    const plan = planLine(peakBefore, line(35, { timing: peak }), T, target);
    expect(plan.verdict).toBe('changed');
    expect(plan.doc).toEqual(timedDoc(version(35, T, null), [version(30, d('2026-01-01'), T)]));
    // The same deck line again: unchanged (idempotent per rate).
    expect(planLine(plan.doc, line(35, { timing: peak }), T, target)).toEqual({ verdict: 'unchanged', doc: null });
  });

  it('removing a timed rate keeps its key and timing', () => {
    expect(planRemoval(timedDoc(version(30, null, null)), T)).toEqual({ kind: 'replace', doc: timedDoc(version(30, null, T)) });
  });

  it('sameState tells rates with different timing keys apart', () => {
    const a = timedDoc(version(30, T, null));
    expect(sameState(a, structuredClone(a))).toBe(true);
    const untimed = { ...a };
    delete untimed.timing_key;
    expect(sameState(a, untimed)).toBe(false);
  });
});

/**
 * A deck planned (dry run) against stored documents: which document each line is matched to, what the
 * deck removes, and duplicates. The store is a stand-in answering the few reads a run makes.
 */
describe('deck lines matched by prefix and timing (dry run)', () => {
  const peak: RateTiming = { days: [1, 2, 3, 4, 5], start: '08:00:00', end: '18:00:00', holidays: null };
  const weekend: RateTiming = { days: [6, 7], start: null, end: null, holidays: null };
  const stored = (id: string, rate: number, timing: RateTiming | null): PricelistRateDoc => ({
    _id: id,
    pricelist_tag: 'pl',
    carrier_tag: 'cr',
    prefix: '44',
    ...(timing ? { timing_key: timingKey(timing)!, timing } : {}),
    ...version(rate, d('2026-01-01'), null),
  });

  function storeOf(docs: PricelistRateDoc[]): Parameters<typeof applyDeck>[0] {
    const select = (filter: Record<string, unknown>) =>
      docs.filter((doc) =>
        Object.entries(filter).every(([field, wanted]) =>
          field === '_id' && typeof wanted === 'object'
            ? (wanted as { $in: string[] }).$in.includes(doc._id)
            : ((doc as unknown as Record<string, unknown>)[field] ?? null) === wanted,
        ),
      );
    const cursor = (found: PricelistRateDoc[]) => ({
      toArray: async () => structuredClone(found),
      async *[Symbol.asyncIterator]() {
        yield* structuredClone(found);
      },
    });
    return {
      pricelists: { findOne: async () => ({ _id: 'p1' }) },
      carriers: { findOne: async () => ({ _id: 'c1' }) },
      rates: {
        find: (filter: Record<string, unknown>) => cursor(select(filter)),
        findOne: async (filter: Record<string, unknown>) => structuredClone(select(filter)[0] ?? null),
        bulkWrite: () => Promise.reject(new Error('a dry run writes nothing')),
      },
    } as unknown as Parameters<typeof applyDeck>[0];
  }

  const plan = (docs: PricelistRateDoc[], csv: string) =>
    applyDeck(storeOf(docs), Readable.from([csv]), {
      pricelist_tag: 'pl',
      carrier_tag: 'cr',
      effective: T,
      dryRun: true,
      announce: async () => {},
    });
  const header = 'prefix,rate,days,start_time,end_time,holidays\n';

  it('adds a base, a peak and a weekend rate for one prefix: three rates', async () => {
    const report = await plan([], `${header}44,10,,,,\n44,30,mon-fri,08:00,18:00,\n44,5,sat-sun,,,\n`);
    expect(report).toMatchObject({ added: 3, changed: 0, unchanged: 0, removed: 0, rejected_count: 0 });
  });

  it('matches each line to the document of its timing: only the peak price changed', async () => {
    const docs = [stored('base', 10, null), stored('peak', 30, peak), stored('weekend', 5, weekend)];
    const report = await plan(docs, `${header}44,10,,,,\n44,35,1-5,08:00:00,18:00:00,\n44,5,"sat,sun",,,\n`);
    expect(report).toMatchObject({ added: 0, changed: 1, unchanged: 2, removed: 0, rejected_count: 0 });
  });

  it('a deck without timing columns names only the untimed rate: the timed ones are removed', async () => {
    const docs = [stored('base', 10, null), stored('peak', 30, peak), stored('weekend', 5, weekend)];
    expect(await plan(docs, 'prefix,rate\n44,10\n')).toMatchObject({ unchanged: 1, removed: 2 });
    expect(await plan(docs, `${header}44,30,1-5,08:00,18:00,\n`)).toMatchObject({ unchanged: 1, removed: 2 });
  });

  it('rejects a second line with the same prefix and timing key, however it is spelled', async () => {
    const report = await plan(
      [],
      `${header}44,30,1-5,08:00,18:00,\n44,31,MON-FRI,08:00:00,18:00:00,\n44,10,,,,\n44,11,1-7,,,\n44,5,6-7,,,only\n44,6,sat-sun,,,\n`,
    );
    expect(report.rejected).toEqual([
      { line: 3, reason: 'BAD_USER_INPUT: prefix: 44 with the timing days 1-5, 08:00:00-18:00:00 already appears on line 2' },
      // Every day, all day, is no timing: the same rate as the untimed line, worded as before timings.
      { line: 5, reason: 'BAD_USER_INPUT: prefix: 44 already appears on line 4' },
    ]);
    // The weekend-on-holidays and the weekend lines differ by their holidays: two rates.
    expect(report).toMatchObject({ added: 4, rejected_count: 2 });
  });

  it('a rejected line keeps the rate it names; one whose timing is unreadable keeps every rate of its prefix', async () => {
    const docs = [stored('base', 10, null), stored('peak', 30, peak)];
    // A bad rate on the peak line: the peak rate is named (not removed), the base one is not named.
    expect(await plan(docs, `${header}44,x,1-5,08:00,18:00,\n`)).toMatchObject({ removed: 1, rejected_count: 1 });
    // A bad timing: which rate the line meant is unknown, so none of 44's rates is removed.
    expect(await plan(docs, `${header}44,30,1-9,08:00,18:00,\n`)).toMatchObject({ removed: 0, rejected_count: 1 });
    // So for a line with the wrong number of cells in a deck with timing columns.
    expect(await plan(docs, `${header}44,30,1-5\n`)).toMatchObject({ removed: 0, rejected_count: 1 });
  });
});
