import type { CarrierDoc, PricelistRateDoc, RateTiming, TimedPrices } from '../types';
import { ratingNumber, stripNumber } from '../numbers/uri';
import {
  carrierAddress,
  carrierRouteString,
  comparePrice,
  isRateValidAt,
  orderCandidates,
  toRouteRate,
  uniqueTags,
  type RouteCandidate,
  type RouteQuery,
  type RouteRate,
} from './routing';
import { termsOf, versionOf } from './terms';
import { appliesBefore, copyTiming, edgesOf, nextBoundary, specificity, timingMatches, type Holidays } from './timing';
import { firstIndexAfter } from './sorted';

interface IndexedRate {
  doc: PricelistRateDoc;
  carrier: CarrierDoc;
  /** Position in the input, the last tie-breaker between otherwise equal rates. */
  seq: number;
  /** How specific its timing is (timing.ts): among one carrier's matching rates at a prefix, the highest applies. */
  rank: number;
}

interface PricelistIndex {
  byPrefix: Map<string, IndexedRate[]>;
  maxPrefixLength: number;
  /** The clock its timings are read on (the pricelist's time_zone, UTC by default). */
  timeZone: string;
  /** Whether any of its rates has a timing: rating a pricelist without one never reads a clock. */
  timed: boolean;
  /** Instants after the build where a rate version starts or ends (its validity window), sorted. */
  validityEdges: number[];
}

/** What timed rates read besides the rates: each pricelist's time zone and the holiday calendar. */
export interface TimingData {
  /** pricelist_tag to IANA time zone; absent: UTC. */
  timeZones?: ReadonlyMap<string, string>;
  /** Holiday dates `YYYY-MM-DD`, local to each pricelist. */
  holidays?: readonly string[];
}

/** Holiday dates a call keeps with its timed prices: from the day before its start, at most this many. */
const HOLIDAYS_KEPT = 400;

export interface PrefixMatchRate {
  rate: RouteRate;
  carrier: CarrierDoc;
  /** Position of the rate's pricelist in the query's pricelist order. */
  pricelistRank: number;
}

export interface PrefixMatch {
  prefix: string;
  /** Every usable rate at the longest matching prefix, in pricelist order then input order. */
  rates: PrefixMatchRate[];
}

/**
 * The current version (the document itself) and, before it, each earlier version as a document of its
 * own: the same id, pricelist, carrier and prefix, that version's terms and window.
 */
function versionsOf(doc: PricelistRateDoc): PricelistRateDoc[] {
  const previous = doc.previous_versions;
  if (!previous || previous.length === 0) return [doc];
  const base = { _id: doc._id, pricelist_tag: doc.pricelist_tag, carrier_tag: doc.carrier_tag, prefix: doc.prefix };
  return [
    ...previous.map((v): PricelistRateDoc => ({
      ...base,
      ...versionOf(v),
    })),
    doc,
  ];
}

/**
 * Per pricelist and carrier, the matching rate with the most specific timing (holiday over weekday over a
 * daily window over none; docs/RATING.md): peak and base both match at 18:30, and peak applies. Keeps
 * the input order otherwise.
 */
function mostSpecific<T extends IndexedRate & { pricelistRank: number }>(found: T[]): T[] {
  const best = new Map<string, T>();
  for (const r of found) {
    const key = `${r.pricelistRank}/${r.carrier.carrier_tag}`;
    const kept = best.get(key);
    if (!kept || appliesBefore(r.doc.timing, r.rank, kept.doc.timing, kept.rank)) best.set(key, r);
  }
  return found.filter((r) => best.get(`${r.pricelistRank}/${r.carrier.carrier_tag}`) === r);
}

/** routeChangesBetween's answer when the route cannot change: shared, never written. */
const NO_INSTANTS: readonly Date[] = Object.freeze([]);

/** A pricelist the query names but the index does not hold (no rates, or none with an active carrier). */
const EMPTY_PRICELIST: PricelistIndex = { byPrefix: new Map(), maxPrefixLength: 0, timeZone: 'UTC', timed: false, validityEdges: [] };

/**
 * In-memory prefix index over rates and carriers, built once per change of rating data.
 * Lookups cost one map probe per (destination prefix length, pricelist); they never scan rates.
 */
export class RatingIndex {
  private constructor(
    private readonly pricelists: ReadonlyMap<string, PricelistIndex>,
    private readonly carriers: ReadonlyMap<string, CarrierDoc>,
    /** Rate documents kept (those whose carrier exists and is active), each counted once whatever its versions. */
    readonly size: number,
    /** The holiday calendar, sorted. */
    private readonly holidayList: readonly string[],
  ) {
    this.holidays = new Set(holidayList);
  }

  private readonly holidays: Holidays;

  static empty(): RatingIndex {
    return RatingIndex.build([], []);
  }

  /**
   * Rates whose carrier is missing or inactive are left out here: the index is rebuilt whenever
   * carriers change, so they can never become routable without a rebuild.
   */
  static build(rates: readonly PricelistRateDoc[], carriers: readonly CarrierDoc[], timing: TimingData = {}): RatingIndex {
    const carrierMap = new Map<string, CarrierDoc>();
    for (const c of carriers) carrierMap.set(c.carrier_tag, { ...c });

    const pricelists = new Map<string, PricelistIndex>();
    let size = 0;
    // Edges already past never change a route again; a big deck's past start dates are not kept.
    const builtAt = Date.now();
    const edges = new Map<PricelistIndex, Set<number>>();
    rates.forEach((doc, seq) => {
      const carrier = carrierMap.get(doc.carrier_tag);
      if (!carrier || !carrier.active) return;
      let pl = pricelists.get(doc.pricelist_tag);
      if (!pl) {
        pl = {
          byPrefix: new Map(),
          maxPrefixLength: 0,
          timeZone: timing.timeZones?.get(doc.pricelist_tag) ?? 'UTC',
          timed: false,
          validityEdges: [],
        };
        pricelists.set(doc.pricelist_tag, pl);
        edges.set(pl, new Set());
      }
      const plEdges = edges.get(pl)!;
      // Keyed like the destinations it matches (ratingNumber): a prefix entered as "+44 20" matches 4420...
      const key = stripNumber(doc.prefix);
      let list = pl.byPrefix.get(key);
      if (!list) {
        list = [];
        pl.byPrefix.set(key, list);
      }
      // Every version of the rate is a candidate of its own, valid in its own window: a call that
      // started before a rate deck's effective time is rated and routed with the terms of its time.
      for (const version of versionsOf(doc)) {
        list.push({ doc: version, carrier, seq, rank: specificity(version.timing) });
        for (const edge of [version.datetime_start, version.datetime_end]) {
          const ms = edge ? new Date(edge).getTime() : Number.NaN;
          if (ms > builtAt) plEdges.add(ms);
        }
      }
      if (doc.timing) pl.timed = true;
      pl.maxPrefixLength = Math.max(pl.maxPrefixLength, key.length);
      size += 1;
    });
    for (const [pl, set] of edges) pl.validityEdges = [...set].sort((a, b) => a - b);
    return new RatingIndex(pricelists, carrierMap, size, [...new Set(timing.holidays ?? [])].sort());
  }

  /**
   * The instants in (`from`, `to`] at which the rate `destination` gets in these pricelists may change:
   * a rate version starting or ending, or a time-of-day edge (midnight too: weekdays and holidays turn
   * there) of a timed rate at any prefix of the destination, on its pricelist's clock. Which prefix is
   * in force can change at such an edge as well as its price: a gap in a longer prefix's timings hands
   * the call to a shorter one (docs/AGENT.md, "The grant holds for every instant the call may be answered
   * at"). Authorization rates the call at each, so its grant holds whatever begin finds at the answer.
   */
  routeChangesBetween(pricelistTags: readonly string[] | null, destination: string, from: Date, to: Date): readonly Date[] {
    // Every authorization asks, and nearly every answer is none: nothing is allocated for it.
    let instants: Set<number> | null = null;
    let number: string | null = null;
    for (const tag of uniqueTags(pricelistTags)) {
      const pl = this.pricelists.get(tag);
      if (!pl) continue;
      for (let i = firstIndexAfter(pl.validityEdges, from.getTime()); pl.validityEdges[i] <= to.getTime(); i += 1)
        (instants ??= new Set()).add(pl.validityEdges[i]);
      if (!pl.timed) continue;
      number ??= ratingNumber(destination);
      const timings: RateTiming[] = [];
      for (let len = Math.min(number.length, pl.maxPrefixLength); len >= 0; len -= 1)
        for (const r of pl.byPrefix.get(number.slice(0, len)) ?? []) if (r.doc.timing) timings.push(r.doc.timing);
      if (timings.length === 0) continue;
      const edges = edgesOf(timings);
      for (let t = nextBoundary(from.getTime(), pl.timeZone, edges); t <= to.getTime(); t = nextBoundary(t, pl.timeZone, edges))
        (instants ??= new Set()).add(t);
    }
    return instants === null ? NO_INSTANTS : [...instants].sort((a, b) => a - b).map((t) => new Date(t));
  }

  /** The carrier document by tag, active or not. */
  carrier(carrierTag: string): CarrierDoc | undefined {
    const c = this.carriers.get(carrierTag);
    return c ? { ...c } : undefined;
  }

  /**
   * The longest prefix of `destination` having a rate in `pricelistTags` valid at `at` with an
   * active carrier, and all such rates at that prefix; null when the destination is unreachable.
   * Every lookup (route, bestRate) comes through here, so a SIP/TEL URI or a formatted number
   * rates like its bare digits (docs/DESIGN.md section 4).
   */
  matchingPrefixRates(pricelistTags: readonly string[] | null, destination: string, at: Date): PrefixMatch | null {
    if (!Number.isFinite(at.getTime())) throw new RangeError('route: invalid date');
    const lists: PricelistIndex[] = [];
    let longest = 0;
    for (const tag of uniqueTags(pricelistTags)) {
      const pl = this.pricelists.get(tag);
      lists.push(pl ?? EMPTY_PRICELIST);
      if (pl) longest = Math.max(longest, pl.maxPrefixLength);
    }
    if (lists.length === 0) return null;

    // Every call and party comes through here (an import rates a million): a probe that finds nothing allocates nothing.
    const number = ratingNumber(destination);
    for (let len = Math.min(number.length, longest); len >= 0; len -= 1) {
      const prefix = number.slice(0, len);
      let found: Array<IndexedRate & { pricelistRank: number }> | null = null;
      for (let pricelistRank = 0; pricelistRank < lists.length; pricelistRank += 1) {
        const pl = lists[pricelistRank];
        const atPrefix = pl.byPrefix.get(prefix);
        if (!atPrefix) continue;
        for (const r of atPrefix) {
          if (!isRateValidAt(r.doc, at)) continue;
          if (r.doc.timing && !timingMatches(r.doc.timing, at.getTime(), pl.timeZone, this.holidays)) continue;
          (found ??= []).push({ ...r, pricelistRank });
        }
      }
      if (found) {
        found.sort((a, b) => a.pricelistRank - b.pricelistRank || a.seq - b.seq);
        const applying = lists.some((pl) => pl.timed) ? mostSpecific(found) : found;
        return {
          prefix,
          rates: applying.map((r) => ({
            rate: this.routeRate(r, lists[r.pricelistRank], prefix, at),
            carrier: { ...r.carrier },
            pricelistRank: r.pricelistRank,
          })),
        };
      }
    }
    return null;
  }

  /**
   * The route rate of a matching rate; with `timed` when its pricelist, carrier and prefix hold timed
   * rates: every price valid (by window) at the call's start, so the call is rated per segment on them.
   */
  private routeRate(r: IndexedRate, pl: PricelistIndex, prefix: string, at: Date): RouteRate {
    const rate = toRouteRate(r.doc);
    if (!pl.timed) return rate;
    const siblings = (pl.byPrefix.get(prefix) ?? []).filter(
      (s) => s.carrier.carrier_tag === r.carrier.carrier_tag && isRateValidAt(s.doc, at),
    );
    if (!siblings.some((s) => s.doc.timing)) return rate;
    const readsHolidays = siblings.some((s) => s.doc.timing?.holidays);
    const timed: TimedPrices = {
      time_zone: pl.timeZone,
      prices: siblings.map((s) => ({ ...termsOf(s.doc), timing: copyTiming(s.doc.timing), description: s.doc.description ?? null })),
      holidays: readsHolidays ? this.holidaysFrom(at) : [],
    };
    return { ...rate, timed };
  }

  /**
   * Holiday dates from two days before `at`'s UTC date, at most HOLIDAYS_KEPT: the local date may be a
   * day before the UTC date (west of UTC), and a window that wraps past midnight reads the day before
   * that (the day it started on: Christmas's 18:00-17:59:59 window still applies on the 26th's afternoon).
   */
  private holidaysFrom(at: Date): string[] {
    const from = new Date(at.getTime() - 2 * 86_400_000).toISOString().slice(0, 10);
    return this.holidayList.filter((d) => d >= from).slice(0, HOLIDAYS_KEPT);
  }

  /**
   * Least-cost routing (docs/DESIGN.md section 3): one candidate per carrier at the longest matching prefix
   * (a carrier in several pricelists keeps its cheapest rate, ties going to the earlier
   * pricelist), ordered by price then carrier_tag, preferred carriers first, override applied.
   * Empty means the destination is unreachable for this account.
   */
  route(query: RouteQuery): RouteCandidate[] {
    const match = this.matchingPrefixRates(query.pricelistTags, query.destination, query.at);
    if (!match) return [];
    // match.rates is already in pricelist-then-input order, so a strict "<" keeps the earlier one.
    const perCarrier = new Map<string, PrefixMatchRate>();
    for (const r of match.rates) {
      const tag = r.carrier.carrier_tag;
      const kept = perCarrier.get(tag);
      if (!kept || comparePrice(r.rate, kept.rate) < 0) perCarrier.set(tag, r);
    }
    const candidates = [...perCarrier.values()].map((r): RouteCandidate => ({
      rate: r.rate,
      carrier: r.carrier,
      carrierIp: carrierAddress(r.carrier),
      routeString: carrierRouteString(r.carrier),
    }));
    return orderCandidates(candidates, query.carrierTags, query.carrierTagsOverride);
  }

  /** The candidate a call would use (its rate is the account's `destination_rate`), or null. */
  bestRate(query: RouteQuery): RouteCandidate | null {
    return this.route(query)[0] ?? null;
  }
}
