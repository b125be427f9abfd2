import { listArgs } from '../common/schema';

const keyArgs = 'id: ID, pricelist_tag: String, pricelist_id: ID, carrier_tag: String, carrier_id: ID, prefix: String';
const writableArgs = `${keyArgs}, datetime_start: DateTime, datetime_end: DateTime, connect_fee: Int, rate: Int, rate_increment: Int, interval_start: Int, description: String`;

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
    "One rate by id, or by pricelist (tag or id), carrier (tag or id) and prefix; null when there is none."
    PricelistRate(${keyArgs}): PricelistRate
    allPricelistRates(${listArgs('PricelistRateFilter')}): [PricelistRate!]
    _allPricelistRatesMeta(${listArgs('PricelistRateFilter')}): ListMetadata
    "Same as _allPricelistRatesMeta (the name the spec documents)."
    _allPricelistRates(${listArgs('PricelistRateFilter')}): ListMetadata
  }

  extend type Mutation {
    """
    Requires the pricelist (pricelist_tag or pricelist_id), the carrier (carrier_tag or carrier_id), prefix
    and rate. Defaults: connect_fee 0, rate_increment 1, interval_start 0, no validity bounds, id a new uuid4.
    """
    createPricelistRate(${writableArgs}): PricelistRate
    """
    Names the rate by id (then pricelist, carrier and prefix are changes) or by pricelist, carrier and
    prefix. Omitted arguments are left unchanged; null clears datetime_start, datetime_end and description.
    """
    updatePricelistRate(${writableArgs}): PricelistRate
    "Returns the deleted rate."
    deletePricelistRate(${keyArgs}): PricelistRate
  }
`;
