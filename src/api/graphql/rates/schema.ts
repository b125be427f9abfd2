import { listArgs } from '../common/schema';

const keyArgs = 'id: ID, pricelist_tag: String, pricelist_id: ID, carrier_tag: String, carrier_id: ID, prefix: String';
const writableArgs = `${keyArgs}, datetime_start: DateTime, datetime_end: DateTime, connect_fee: Int, rate: Int, rate_increment: Int, interval_start: Int, description: String, timing: RateTimingInput`;

export const rateTypeDefs = /* GraphQL */ `
  "What calls to destinations starting with prefix cost in a pricelist, and the carrier they go out on."
  type PricelistRate {
    id: ID!
    pricelist_tag: String!
    carrier_tag: String!
    "Destination prefix; the longest matching prefix wins. Empty matches every destination."
    prefix: String!
    "Start of validity (inclusive); null: no start bound"
    datetime_start: DateTime
    "End of validity (exclusive); null: valid indefinitely"
    datetime_end: DateTime
    "Charged once when the call connects (minor units)"
    connect_fee: Int!
    "Per minute (minor units)"
    rate: Int!
    "Billing step in seconds (0 means 1)"
    rate_increment: Int!
    "Second of the call from which the rate applies; earlier seconds cost only the connect fee"
    interval_start: Int!
    description: String
    "When in the week or day it applies, on its pricelist's clock (time_zone); null: at all times"
    timing: RateTiming
    "Earlier versions a rate deck replaced, oldest first; each valid in its own closed window, before the current one"
    previous_versions: [PricelistRateVersion!]! @embedded
  }

  "An earlier version of a rate: its terms and validity window (calls that started in it are rated with it)."
  type PricelistRateVersion {
    "Start of validity (inclusive); null: no start bound"
    datetime_start: DateTime
    "End of validity (exclusive)"
    datetime_end: DateTime
    connect_fee: Int!
    rate: Int!
    rate_increment: Int!
    interval_start: Int!
    description: String
    timing: RateTiming
  }

  "Whether a timed rate applies on the holiday calendar's dates."
  enum HolidayRule {
    "On holiday dates only"
    only
    "Never on holiday dates"
    exclude
  }

  """
  When a rate applies (docs/RATING.md): the most specific matching rate of a prefix applies (holidays
  only, then weekdays, then a daily window, then no timing); a call that crosses a boundary is rated per segment.
  """
  type RateTiming {
    "ISO weekdays, 1 Monday to 7 Sunday; null: every day"
    days: [Int!]
    "Local time HH:MM:SS, inclusive; null (with end): the whole day"
    start: String
    "Local time HH:MM:SS, exclusive; at or before start: the window runs past midnight"
    end: String
    "only, exclude, or null (whatever the day)"
    holidays: HolidayRule
  }

  input RateTimingInput {
    days: [Int!]
    start: String
    end: String
    holidays: HolidayRule
  }

  "Each tag or id member takes one value or a list of values."
  input PricelistRateFilter {
    "Full-text search: prefix, description or carrier_tag contains it (any case)"
    q: String
    id: ID
    ids: [ID!]
    pricelist_id: [ID!]
    pricelist_tag: [String!]
    carrier_id: [ID!]
    carrier_tag: [String!]
    prefix: [String!]
  }

  extend type Query {
    "One rate by id, or by pricelist (tag or id), carrier (tag or id) and prefix (the rate without a timing); null when there is none."
    PricelistRate(${keyArgs}): PricelistRate
    allPricelistRates(${listArgs('PricelistRateFilter')}): [PricelistRate!]
    _allPricelistRatesMeta(${listArgs('PricelistRateFilter')}): ListMetadata
    "Same as _allPricelistRatesMeta (the name the spec documents)."
    _allPricelistRates(${listArgs('PricelistRateFilter')}): ListMetadata
  }

  extend type Mutation {
    """
    Requires the pricelist (pricelist_tag or pricelist_id), the carrier (carrier_tag or carrier_id), prefix
    and rate. Defaults: connect_fee 0, rate_increment 1, interval_start 0, no validity bounds, no timing, id a
    new uuid4. A prefix holds one rate per timing (a base rate and a peak one, say) for each pricelist and carrier.
    """
    createPricelistRate(${writableArgs}): PricelistRate
    """
    Names the rate by id (then pricelist, carrier and prefix are changes) or by pricelist, carrier and
    prefix (the rate without a timing; a timed rate is named by id). Omitted arguments are left unchanged;
    null clears datetime_start, datetime_end, description and timing.
    """
    updatePricelistRate(${writableArgs}): PricelistRate
    "Returns the deleted rate."
    deletePricelistRate(${keyArgs}): PricelistRate
  }
`;
