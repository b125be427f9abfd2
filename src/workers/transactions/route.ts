import type { AccountDoc, RateSnapshot } from '../../shared/domain/types';
import { RatingIndex, routeFor, RouteCandidate, toRateSnapshot } from '../../shared/domain/rating';

export interface PartyRate {
  /** The rate snapshot to bill with; null when nothing applies (inbound without a rate). */
  rate: RateSnapshot | null;
  carrierIp: string;
  candidates: RouteCandidate[];
}

/**
 * The rate of each party: outbound parties need a route (null = unreachable). The inbound receiver is
 * charged nothing: docs/DESIGN.md section 4 keeps the door open for inbound rates but charges none by default.
 */
/** What routing reads of an account: its pricelists and carrier preferences. */
type RoutedAccount = Pick<AccountDoc, 'pricelist_tags' | 'carrier_tags' | 'carrier_tags_override'>;

/** The call as routing sees it; `carrierIp` is the carrier the proxy named, if any. */
interface RoutedCall {
  destination: string;
  at: Date;
  carrierIp: string | null;
}

export function rateParty(index: RatingIndex, account: RoutedAccount, inbound: boolean, call: RoutedCall): PartyRate | null {
  if (inbound) {
    return { rate: null, carrierIp: '', candidates: [] };
  }
  const candidates = routeFor(index, account, call.destination, call.at, call.carrierIp);
  if (candidates.length === 0) return null;
  return { rate: toRateSnapshot(candidates[0].rate), carrierIp: candidates[0].carrierIp, candidates };
}

/**
 * Rates every party of a call, the caller first (`parties` in the call's order): the caller on the
 * carrier the proxy named (`carrierIp`; else its own first route), every other party on the carrier
 * the caller resolved to, at its own rate there (its own first route only where it has none), which is
 * what authorization sized the grant on (rateOnCarrier). Without this a parent was billed on its own
 * first route whenever the proxy sent no `carrier_ip`, or one matching no carrier: dearer than granted.
 * `{ unreachable }` names the first party that cannot reach the destination.
 */
export function rateParties<P extends { account: RoutedAccount; inbound: boolean }>(
  index: RatingIndex,
  parties: readonly P[],
  call: RoutedCall,
): Array<{ party: P; rate: PartyRate }> | { unreachable: P } {
  const rated: Array<{ party: P; rate: PartyRate }> = [];
  let callersCarrier = call.carrierIp;
  for (const party of parties) {
    const partyRate = rateParty(index, party.account, party.inbound, rated.length === 0 ? call : { ...call, carrierIp: callersCarrier });
    if (!partyRate) return { unreachable: party };
    if (rated.length === 0 && partyRate.carrierIp) callersCarrier = partyRate.carrierIp;
    rated.push({ party, rate: partyRate });
  }
  return rated;
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
