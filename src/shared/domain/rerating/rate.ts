import type { AccountDoc, TransactionDoc } from '../types';
import type { Rerated } from '../ledger/rerate';
import { callFee, routeFor, toRateSnapshot, type RatingIndex } from '../rating';

/**
 * A record rated again with the rating data in force now, at the prices valid when its call started
 * (docs/RERATING.md): its account's pricelists, on the carrier it went out on (the rate's carrier_tag,
 * else the carrier_ip the switch named, else the best route). Null when it cannot be rated again (no
 * destination or times, an inbound record, its carrier no longer routes it): it is left as it is.
 */
export function rateAgain(index: RatingIndex, account: AccountDoc, record: TransactionDoc): Rerated | null {
  if (record.inbound || !record.destination || !record.timestamp_begin) return null;
  const candidates = routeFor(index, account, record.destination, record.timestamp_begin, record.carrier_ip);
  const carrierTag = record.destination_rate?.carrier_tag;
  const pick = carrierTag ? candidates.find((c) => c.carrier.carrier_tag === carrierTag) : candidates[0];
  if (!pick) return null;
  const rate = toRateSnapshot(pick.rate);
  const { fee, segments } = callFee(rate, record.timestamp_begin, record.duration);
  return { fee, rate, segments };
}
