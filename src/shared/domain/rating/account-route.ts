import type { AccountDoc } from '../types';
import type { RatingIndex } from './rating-index';
import type { RouteCandidate } from './routing';

/**
 * Least-cost routing for one account. When the switch names the carrier it used (`carrier_ip`,
 * `host` or `host:port`), that carrier's rate is billed if it is among the candidates.
 */
export function routeFor(
  index: RatingIndex,
  account: Pick<AccountDoc, 'pricelist_tags' | 'carrier_tags' | 'carrier_tags_override'>,
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
