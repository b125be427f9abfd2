import fc from 'fast-check';
import type { CarrierDoc, PricelistRateDoc, RateVersion } from '../../../src/shared/domain/types';
import { planLine, planRemoval, versionAt, versionsOf, type DeckRate } from '../../../src/shared/domain/rate-decks';
import { RatingIndex } from '../../../src/shared/domain/rating';

// Times are whole seconds in a small range, so generated windows often meet T exactly.
const SECOND = 1000;
const at = (s: number) => new Date(s * SECOND);

const terms = fc.record({
  connect_fee: fc.integer({ min: 0, max: 3 }),
  rate: fc.integer({ min: 0, max: 3 }),
  rate_increment: fc.constantFrom(0, 1, 60),
  interval_start: fc.constantFrom(0, 5),
  description: fc.constantFrom(null, 'a', 'b'),
});

/**
 * A well-formed document: 1-4 versions in time order, each window non-empty, none overlapping (gaps
 * allowed), only the first may have an open start and only the current one an open end.
 */
const docArb: fc.Arbitrary<PricelistRateDoc> = fc
  .record({
    n: fc.integer({ min: 1, max: 4 }),
    points: fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { minLength: 8, maxLength: 8 }),
    gaps: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
    openStart: fc.boolean(),
    openEnd: fc.boolean(),
    all: fc.array(terms, { minLength: 4, maxLength: 4 }),
  })
  .map(({ n, points, gaps, openStart, openEnd, all }) => {
    const sorted = [...points].sort((a, b) => a - b);
    const versions: RateVersion[] = [];
    let cursor = 0;
    for (let i = 0; i < n; i += 1) {
      const start = sorted[cursor];
      // A gap skips a point between this version's end and the next one's start.
      const end = sorted[cursor + 1];
      cursor += gaps[i] ? 2 : 1;
      versions.push({ ...all[i], datetime_start: at(start), datetime_end: at(end) });
    }
    if (openStart) versions[0].datetime_start = null;
    if (openEnd) versions[n - 1].datetime_end = null;
    const current = versions[n - 1];
    return { _id: 'id', pricelist_tag: 'pl', carrier_tag: 'cr', prefix: '44', ...current, previous_versions: versions.slice(0, -1) };
  });

const lineArb: fc.Arbitrary<DeckRate> = terms.map((t) => ({ prefix: '44', ...t }));
const T = fc.integer({ min: 0, max: 40 }).map(at);
const target = { pricelist_tag: 'pl', carrier_tag: 'cr', newId: () => 'new' };

/** Every version closed but the current one, in order, non-overlapping, with a non-empty window. */
function wellFormed(doc: PricelistRateDoc): boolean {
  const vs = versionsOf(doc);
  return vs.every((v, i) => {
    const last = i === vs.length - 1;
    if (!last && v.datetime_end === null) return false;
    if (i > 0 && v.datetime_start === null) return false;
    if (v.datetime_start && v.datetime_end && v.datetime_end <= v.datetime_start) return false;
    const next = vs[i + 1];
    return !next || (v.datetime_end !== null && next.datetime_start !== null && v.datetime_end <= next.datetime_start);
  });
}

const termsOf = (v: RateVersion | null) =>
  v && {
    connect_fee: v.connect_fee,
    rate: v.rate,
    rate_increment: v.rate_increment,
    interval_start: v.interval_start,
    description: v.description,
  };

const probes = fc.array(fc.integer({ min: -2, max: 45 }), { minLength: 1, maxLength: 10 });

describe('rate deck planning (properties)', () => {
  it('generated documents are well formed', () => {
    fc.assert(fc.property(docArb, (doc) => wellFormed(doc)));
  });

  it('a deck line keeps every price before T, sets the line from T on, and stays well formed', () => {
    fc.assert(
      fc.property(fc.option(docArb, { nil: null }), lineArb, T, probes, (before, line, t, times) => {
        const plan = planLine(before, line, t, target);
        const after = plan.doc ?? before!;
        expect(wellFormed(after)).toBe(true);
        for (const s of times) {
          const when = at(s);
          if (when < t) expect(termsOf(versionAt(after, when))).toEqual(before ? termsOf(versionAt(before, when)) : null);
          else expect(termsOf(versionAt(after, when))).toEqual(termsOf({ ...line, datetime_start: null, datetime_end: null }));
        }
        if (plan.verdict === 'unchanged') expect(before).not.toBeNull();
        if (plan.verdict === 'added') expect(before).toBeNull();
      }),
    );
  });

  it('is idempotent: the same line at the same T a second time is unchanged', () => {
    fc.assert(
      fc.property(fc.option(docArb, { nil: null }), lineArb, T, (before, line, t) => {
        const first = planLine(before, line, t, target);
        const after = first.doc ?? before!;
        expect(planLine(after, line, t, target)).toEqual({ verdict: 'unchanged', doc: null });
      }),
    );
  });

  it('unchanged only when the version at T has the same terms and no end', () => {
    fc.assert(
      fc.property(docArb, lineArb, T, (before, line, t) => {
        const v = versionAt(before, t);
        const same =
          v !== null &&
          v.datetime_end === null &&
          JSON.stringify(termsOf(v)) === JSON.stringify(termsOf({ ...line, datetime_start: null, datetime_end: null }));
        expect(planLine(before, line, t, target).verdict).toBe(same ? 'unchanged' : 'changed');
      }),
    );
  });

  it('a removal keeps every price before T, none from T on, and a second removal does nothing', () => {
    fc.assert(
      fc.property(docArb, T, probes, (before, t, times) => {
        const plan = planRemoval(before, t);
        const after = plan.kind === 'replace' ? plan.doc : plan.kind === 'none' ? before : null;
        if (after) {
          expect(wellFormed(after)).toBe(true);
          expect(planRemoval(after, t)).toEqual({ kind: 'none' });
        }
        for (const s of times) {
          const when = at(s);
          const expected = when < t ? termsOf(versionAt(before, when)) : null;
          expect(after ? termsOf(versionAt(after, when)) : null).toEqual(expected);
        }
      }),
    );
  });

  it('the rating index rates a call with the version valid at its start', () => {
    const carrier: CarrierDoc = { _id: 'c', carrier_tag: 'cr', host: 'h', port: 5060, protocol: 'UDP', active: true };
    fc.assert(
      fc.property(docArb, probes, (doc, times) => {
        const index = RatingIndex.build([doc], [carrier]);
        for (const s of times) {
          const when = at(s);
          const match = index.matchingPrefixRates(['pl'], '44123', when);
          const expected = versionAt(doc, when);
          if (!expected) expect(match).toBeNull();
          else {
            expect(match?.rates).toHaveLength(1);
            const { connect_fee, rate, rate_increment, interval_start, description } = match!.rates[0].rate;
            expect({ connect_fee, rate, rate_increment, interval_start, description }).toEqual(termsOf(expected));
            expect(match!.rates[0].rate.id).toBe('id');
          }
        }
      }),
    );
  });
});
