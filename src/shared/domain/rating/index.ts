export { callDurationSeconds } from './duration';
export { computeFee, feeForSeconds, ceilDiv } from './fee';
export { normalizeTerms, sameTerms, snapshotOf, termsOf, versionOf, TERM_FIELDS, type NormalizedTerms } from './terms';
export { maxAvailableUnits, canAffordStart, DEFAULT_HEADROOM_SECONDS, MAX_UNITS_CAP } from './units';
export { runningCost, availableBalance } from './available';
export {
  isRateValidAt,
  carrierAddress,
  carrierRouteString,
  toRouteRate,
  toRateSnapshot,
  comparePrice,
  compareCandidates,
  orderCandidates,
  type RouteRate,
  type RouteCandidate,
  type RouteQuery,
} from './routing';
export { RatingIndex, type PrefixMatch, type PrefixMatchRate } from './rating-index';
export { segmentedFee, segmentedMaxUnits, constantTimeline, type PriceTimeline, type Segment, type SegmentedFee } from './segments';
export {
  edgesOf,
  isTimeZone,
  localTime,
  nextBoundary,
  specificity,
  timingMatches,
  timingKey,
  normalizeTiming,
  timingProblem,
  type Holidays,
  type RateTiming,
} from './timing';
export { callFee, canAffordStartAt, feeAt, grantUnits, timelineOf, type CallFee } from './tariff';
export { committed, hasSpendLimits, hasWindowLimits, limitRoom, type SpendLimits, type Spent } from './limits';
export { routeFor } from './account-route';
export { dearestFeeWhileRinging, grantWhileRinging, type AnswerWindow } from './ringing';
