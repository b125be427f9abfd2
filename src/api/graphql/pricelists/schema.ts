import { listArgs } from '../common/schema';

const writableArgs = 'id: ID, pricelist_tag: String, tag: String, name: String, currency: PricelistCurrency, time_zone: String';

export const pricelistTypeDefs = /* GraphQL */ `
  enum PricelistCurrency {
    USD
    EUR
  }

  "A named group of rates in one currency."
  type Pricelist {
    id: ID!
    pricelist_tag: String!
    name: String
    currency: PricelistCurrency!
    "The clock its rates' timings are read on: an IANA time zone name (Europe/Berlin); null: UTC"
    time_zone: String
  }

  input PricelistFilter {
    id: ID
    ids: [ID!]
    "One tag or a list of tags"
    pricelist_tag: [String!]
    currency: PricelistCurrency
    "Search box: a case-insensitive substring (taken literally, at most 100 characters) of pricelist_tag or name"
    q: String
  }

  extend type Query {
    "One pricelist by id or pricelist_tag (tag is an alias); null when there is none."
    Pricelist(id: ID, pricelist_tag: String, tag: String): Pricelist
    allPricelists(${listArgs('PricelistFilter')}): [Pricelist!]
    _allPricelistsMeta(${listArgs('PricelistFilter')}): ListMetadata
  }

  extend type Mutation {
    "pricelist_tag (or its alias tag) and currency are required; id defaults to a new uuid4."
    createPricelist(${writableArgs}): Pricelist
    "Names the pricelist by id (then pricelist_tag renames it) or by pricelist_tag. Omitted arguments are left unchanged."
    updatePricelist(${writableArgs}): Pricelist
    "Refused (INVALID_REFERENCE) while rates or accounts use the pricelist. Returns the deleted pricelist."
    deletePricelist(id: ID, pricelist_tag: String, tag: String): Pricelist
  }
`;
