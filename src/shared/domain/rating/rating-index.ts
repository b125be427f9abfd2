import type { CarrierDoc, PricelistRateDoc } from '../types';
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
import { versionOf } from './terms';

interface IndexedRate {
  doc: PricelistRateDoc;
  carrier: CarrierDoc;
  /** Position in the input, the last tie-breaker between otherwise equal rates. */
  seq: number;
}

interface PricelistIndex {
  byPrefix: Map<string, IndexedRate[]>;
  maxPrefixLength: number;
}

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

/** A pricelist the query names but the index does not hold (no rates, or none with an active carrier). */
const EMPTY_PRICELIST: PricelistIndex = { byPrefix: new Map(), maxPrefixLength: 0 };

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
  ) {}

  static empty(): RatingIndex {
    return RatingIndex.build([], []);
  }

  /**
   * Rates whose carrier is missing or inactive are left out here: the index is rebuilt whenever
   * carriers change, so they can never become routable without a rebuild.
   */
  static build(rates: readonly PricelistRateDoc[], carriers: readonly CarrierDoc[]): RatingIndex {
    const carrierMap = new Map<string, CarrierDoc>();
    for (const c of carriers) carrierMap.set(c.carrier_tag, { ...c });

    const pricelists = new Map<string, PricelistIndex>();
    let size = 0;
    rates.forEach((doc, seq) => {
      const carrier = carrierMap.get(doc.carrier_tag);
      if (!carrier || !carrier.active) return;
      let pl = pricelists.get(doc.pricelist_tag);
      if (!pl) {
        pl = { byPrefix: new Map(), maxPrefixLength: 0 };
        pricelists.set(doc.pricelist_tag, pl);
      }
      // Keyed like the destinations it matches (ratingNumber): a prefix entered as "+44 20" matches 4420...
      const key = stripNumber(doc.prefix);
      let list = pl.byPrefix.get(key);
      if (!list) {
        list = [];
        pl.byPrefix.set(key, list);
      }
      // Every version of the rate is a candidate of its own, valid in its own window: a call that
      // started before a rate deck's effective time is rated and routed with the terms of its time.
      for (const version of versionsOf(doc)) list.push({ doc: version, carrier, seq });
      pl.maxPrefixLength = Math.max(pl.maxPrefixLength, key.length);
      size += 1;
    });
    return new RatingIndex(pricelists, carrierMap, size);
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
        const atPrefix = lists[pricelistRank].byPrefix.get(prefix);
        if (!atPrefix) continue;
        for (const r of atPrefix) {
          if (isRateValidAt(r.doc, at)) (found ??= []).push({ ...r, pricelistRank });
        }
      }
      if (found) {
        found.sort((a, b) => a.pricelistRank - b.pricelistRank || a.seq - b.seq);
        return {
          prefix,
          rates: found.map((r) => ({
            rate: toRouteRate(r.doc),
            carrier: { ...r.carrier },
            pricelistRank: r.pricelistRank,
          })),
        };
      }
    }
    return null;
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
