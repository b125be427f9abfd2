import type { PricelistRateDoc, RateVersion } from '../../../src/shared/domain/types';
import { cutAt, planLine, planRemoval, sameState, versionAt, type DeckRate } from '../../../src/shared/domain/rate-decks';

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
