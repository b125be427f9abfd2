import type { CarrierDoc, PricelistRateDoc, RateSnapshot } from '../types';
import { snapshotOf, versionOf } from './terms';

/** A rate as returned by routing: the snapshot to save plus where it came from. */
export type RouteRate = RateSnapshot & {
  id: string;
  datetime_start: Date | null;
  datetime_end: Date | null;
};

export interface RouteCandidate {
  rate: RouteRate;
  carrier: CarrierDoc;
  /** `host:port`, as saved in `carrier_ip`. */
  carrierIp: string;
  /** `PROTOCOL:host:port`, as listed by `authorization`. */
  routeString: string;
}

export interface RouteQuery {
  /** The account's pricelists, in priority order (null: none). */
  pricelistTags: readonly string[] | null;
  destination: string;
  /** Start of the call; selects rates by validity window. */
  at: Date;
  /** Preferred carriers, moved to the front in this order. */
  carrierTags?: readonly string[] | null;
  /** When non-empty, the only carriers allowed, in this order. */
  carrierTagsOverride?: readonly string[] | null;
}

/** Inclusive start, exclusive end; null bounds are open. */
export function isRateValidAt(rate: Pick<PricelistRateDoc, 'datetime_start' | 'datetime_end'>, at: Date): boolean {
  const t = at.getTime();
  if (rate.datetime_start !== null && rate.datetime_start !== undefined) {
    if (rate.datetime_start.getTime() > t) return false;
  }
  if (rate.datetime_end !== null && rate.datetime_end !== undefined) {
    if (rate.datetime_end.getTime() <= t) return false;
  }
  return true;
}

function formatHost(host: string): string {
  // A bare IPv6 address needs brackets, or its port could not be told apart.
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** `host:port` of a carrier. */
export function carrierAddress(carrier: Pick<CarrierDoc, 'host' | 'port'>): string {
  return `${formatHost(carrier.host)}:${carrier.port}`;
}

/** `PROTOCOL:host:port` of a carrier. */
export function carrierRouteString(carrier: Pick<CarrierDoc, 'protocol' | 'host' | 'port'>): string {
  return `${carrier.protocol}:${carrierAddress(carrier)}`;
}

/** Copy of a rate document in the shape routing returns; later changes to the index never leak. */
export function toRouteRate(doc: PricelistRateDoc): RouteRate {
  return {
    id: doc._id,
    pricelist_tag: doc.pricelist_tag,
    carrier_tag: doc.carrier_tag,
    prefix: doc.prefix,
    ...versionOf(doc),
  };
}

/** Just the snapshot fields, for `destination_rate` on running entries and records. */
export const toRateSnapshot = snapshotOf;

function compareStrings(a: string, b: string): number {
  // Code-unit order, independent of the process locale.
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareNumbers(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Price order: ascending rate, then connect fee. */
export function comparePrice(a: { rate: number; connect_fee: number }, b: { rate: number; connect_fee: number }): number {
  return compareNumbers(a.rate, b.rate) || compareNumbers(a.connect_fee, b.connect_fee);
}

/** Least-cost order: price, then carrier_tag so equal prices still order deterministically. */
export function compareCandidates(a: RouteCandidate, b: RouteCandidate): number {
  return comparePrice(a.rate, b.rate) || compareStrings(a.carrier.carrier_tag, b.carrier.carrier_tag);
}

const NO_TAGS: readonly string[] = Object.freeze([]);

/** The tags without repeats, in first-seen order. A list of none or one is returned as is: rating calls this per call and party. */
export function uniqueTags(tags: readonly string[] | null | undefined): readonly string[] {
  if (!tags || tags.length === 0) return NO_TAGS;
  return tags.length === 1 ? tags : [...new Set(tags)];
}

/**
 * Applies the account's carrier preferences to candidates (one per carrier):
 * least-cost order, then preferred `carrierTags` to the front in the account's order, then,
 * if `override` is non-empty, only the override carriers in the override's order.
 */
export function orderCandidates(
  candidates: readonly RouteCandidate[],
  carrierTags?: readonly string[] | null,
  override?: readonly string[] | null,
): RouteCandidate[] {
  const sorted = [...candidates].sort(compareCandidates);
  const forced = uniqueTags(override);
  const preferredTags = uniqueTags(carrierTags);
  // Most accounts state no preference: their order is the price order.
  if (forced.length === 0 && preferredTags.length === 0) return sorted;
  const byTag = new Map(sorted.map((c) => [c.carrier.carrier_tag, c] as const));

  if (forced.length > 0) {
    return forced.flatMap((tag) => byTag.get(tag) ?? []);
  }

  const preferred = preferredTags.filter((tag) => byTag.has(tag));
  if (preferred.length === 0) return sorted;
  const front = new Set(preferred);
  return [...preferred.map((tag) => byTag.get(tag) as RouteCandidate), ...sorted.filter((c) => !front.has(c.carrier.carrier_tag))];
}
