import type { AccountDoc, RateSnapshot } from '../../shared/domain/types';
import { RatingIndex, RouteCandidate, toRateSnapshot } from '../../shared/domain/rating';

export interface PartyRate {
  /** The rate snapshot to bill with; null when nothing applies (inbound without a rate). */
  rate: RateSnapshot | null;
  carrierIp: string;
  candidates: RouteCandidate[];
}

/**
 * Least-cost routing for one account. When the switch names the carrier it used (`carrier_ip`,
 * `host` or `host:port`), that carrier's rate is billed if it is among the candidates.
 */
export function routeFor(
  index: RatingIndex,
  account: AccountDoc,
  destination: string,
  at: Date,
  carrierIpHint: string | null,
): RouteCandidate[] {
  const candidates = index.route({
    pricelistTags: account.pricelist_tags ?? [],
    destination,
    at,
    carrierTags: account.carrier_tags,
    carrierTagsOverride: account.carrier_tags_override,
  });
  if (!carrierIpHint) return candidates;
  const hinted = candidates.findIndex((c) => c.carrierIp === carrierIpHint || c.carrier.host === carrierIpHint);
  return hinted <= 0 ? candidates : [candidates[hinted], ...candidates.filter((_, i) => i !== hinted)];
}

/**
 * The rate of each party: outbound parties need a route (null = unreachable). The inbound receiver is
 * charged nothing: docs/DESIGN.md section 4 keeps the door open for inbound rates but charges none by default.
 */
export function rateParty(
  index: RatingIndex,
  account: AccountDoc,
  inbound: boolean,
  call: { destination: string; at: Date; carrierIp: string | null },
): PartyRate | null {
  if (inbound) {
    return { rate: null, carrierIp: '', candidates: [] };
  }
  const candidates = routeFor(index, account, call.destination, call.at, call.carrierIp);
  if (candidates.length === 0) return null;
  return { rate: toRateSnapshot(candidates[0].rate), carrierIp: candidates[0].carrierIp, candidates };
}

/**
 * The rate begin bills a party at when the call goes out on `carrier` (one of the caller's listed
 * routes): the party's own rate on that carrier, matched as begin matches the `carrier_ip` a proxy
 * sends; else the party's first route. Authorization sizes its grant on these (authorization.ts).
 */
export function rateOnCarrier(party: PartyRate, carrier: RouteCandidate): RateSnapshot | null {
  if (party.candidates.length === 0) return party.rate;
  const match = party.candidates.find((c) => c.carrierIp === carrier.carrierIp || c.carrier.host === carrier.carrierIp);
  return match ? toRateSnapshot(match.rate) : party.rate;
}
