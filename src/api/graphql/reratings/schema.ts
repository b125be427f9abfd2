import { listArgs } from '../common/schema';

/**
 * A dry run reads and rates every record of its selection: a quarter of the default query cost limit, so
 * a request holds a few (aliases), not hundreds (docs/API.md, "Query limits").
 */
const PREVIEW_COST = 45_000;

const selectionArgs = 'from: DateTime!, to: DateTime!, account_tags: [String!], pricelist_tag: String, carrier_tag: String, prefix: String';

export const reratingTypeDefs = /* GraphQL */ `
  """
  A rerating run (docs/RERATING.md): the selected records rated again at the prices valid when their call
  started, each changed fee corrected through the ledger once (refunded or charged on every party). Its
  batches run in the workers; the counts grow as they go.
  """
  type Rerating {
    id: ID!
    "running or done"
    state: String!
    "Calls that started from this time (inclusive)"
    from: DateTime!
    "... up to this time (exclusive)"
    to: DateTime!
    account_tags: [String!]
    pricelist_tag: String
    carrier_tag: String
    "Destinations (as stored) starting with it"
    prefix: String
    "Records the selection held when the run started (for progress)"
    total: Int
    "Records read so far"
    seen: Int!
    "Records whose fee changed"
    changed: Int!
    unchanged: Int!
    "Records left as they were (their carrier no longer routes them, or rolled back meanwhile)"
    skipped: Int!
    "Sum of (new fee - old fee) over the changed records, minor units"
    difference: BigInt!
    "Batches done"
    batches: Int!
    created_at: DateTime!
    updated_at: DateTime!
    finished_at: DateTime
  }

  "What a rerating would do to one account."
  type ReratingAccountDifference {
    account_tag: String!
    records: Int!
    difference: BigInt!
  }

  "One record a rerating would change."
  type ReratingChange {
    id: ID!
    account_tag: String!
    transaction_tag: String!
    timestamp_begin: DateTime
    fee_before: BigInt!
    fee_after: BigInt!
  }

  "The dry run of a rerating: nothing is changed."
  type ReratingPreview {
    records: Int!
    changed: Int!
    unchanged: Int!
    "Records that could not be rated again (left as they are)"
    unrated: Int!
    difference: BigInt!
    "Per account with a change, the largest difference first"
    accounts: [ReratingAccountDifference!]! @embedded
    "The biggest changes, either way"
    sample: [ReratingChange!]! @embedded
  }

  input ReratingFilter {
    id: ID
    ids: [ID!]
    state: String
  }

  extend type Query {
    Rerating(id: ID!): Rerating
    allReratings(${listArgs('ReratingFilter')}): [Rerating!]
    _allReratingsMeta(${listArgs('ReratingFilter')}): ListMetadata
    "The dry run: how many records a rerating would change, per account, and the biggest changes (sample: how many, default 10, at most 100)."
    reratingPreview(${selectionArgs}, sample: Int): ReratingPreview! @scan(cost: ${PREVIEW_COST})
  }

  extend type Mutation {
    "Starts a rerating run over the selection; its batches run in the workers. Follow it with Rerating(id)."
    createRerating(${selectionArgs}): Rerating!
  }
`;
