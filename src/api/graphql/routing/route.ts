import type { PricelistRateDoc } from '../../../shared/domain/types';
import type { RouteCandidate, RouteRate } from '../../../shared/domain/rating';
import type { ApiServices } from '../context';

export interface RoutingQuery {
  destination: string;
  pricelistTags: readonly string[] | null;
  carrierTags?: readonly string[] | null;
  carrierTagsOverride?: readonly string[] | null;
}

/**
 * Least-cost routing for a call starting now, by the rules of docs/DESIGN.md section 3, from the
 * in-memory rating index (the one the engine rates calls with).
 */
export async function routeNow(ratingData: ApiServices['ratingData'], query: RoutingQuery): Promise<RouteCandidate[]> {
  const index = await ratingData.index();
  return index.route({ ...query, at: new Date() });
}

/** A routed rate in the stored shape, so the PricelistRate type resolves it like any rate. */
export function asRateDoc(rate: RouteRate): PricelistRateDoc {
  const { id, ...fields } = rate;
  return { _id: id, ...fields, description: fields.description ?? null };
}
