import { listArgs } from '../common/schema';

const writableArgs = `id: ID, transaction_tag: String, account_tag: String, source: String, source_ip: String,
    destination: String, carrier_ip: String, tags: [String!], authorized: Boolean, unauthorized_reason: String,
    destination_rate: InputAccountPricelistRate, timestamp_auth: DateTime, timestamp_begin: DateTime,
    timestamp_end: DateTime, inbound: Boolean, failed: Boolean, duration: Int, fee: BigInt`;

export const transactionTypeDefs = /* GraphQL */ `
  "The rate a call was charged with, as copied onto its record when it was rated."
  type RateSnapshot {
    pricelist_tag: String
    carrier_tag: String
    prefix: String
    connect_fee: Int
    rate: Int
    rate_increment: Int
    interval_start: Int
    description: String
  }

  "A rate snapshot given for a Transaction record. pricelist_tag, carrier_tag, prefix and rate are required."
  input InputAccountPricelistRate {
    pricelist_tag: String
    carrier_tag: String
    prefix: String
    connect_fee: Int
    rate: Int
    rate_increment: Int
    interval_start: Int
    description: String
  }

  "The consolidated record of a call, carrying everything it was rated with."
  type Transaction {
    id: ID!
    transaction_tag: String!
    account_tag: String!
    "The account, resolved by account_tag; null if it no longer exists"
    account: Account
    source: String
    source_ip: String
    destination: String
    carrier_ip: String
    tags: [String!]
    "null on a record written by recordTransaction"
    authorized: Boolean
    unauthorized_reason: String
    destination_rate: RateSnapshot
    timestamp_auth: DateTime
    timestamp_begin: DateTime
    timestamp_end: DateTime
    inbound: Boolean!
    failed: Boolean!
    "Seconds"
    duration: Int!
    "Minor currency units"
    fee: BigInt!
    "Only for a timed rate (docs/RATING.md): what each stretch of the call was charged; null otherwise"
    segments: [ChargedSegment!] @embedded
    "Every rerating that changed the fee, oldest first (docs/RERATING.md); the fee first charged is the first one's fee_before"
    reratings: [RecordRerating!] @embedded
  }

  "One rerating of a record: the run, when, the fee before and after."
  type RecordRerating {
    run: ID!
    at: DateTime!
    fee_before: BigInt!
    fee_after: BigInt!
  }

  """
  One stretch of a call rated with a timed rate, at one price. The record's fee is the connect fee of the
  price at the call's start plus the segments' fees.
  """
  type ChargedSegment {
    prefix: String!
    "Second of the call where the stretch's first charged increment starts"
    from: Int!
    "Seconds charged in the stretch (whole increments)"
    seconds: Int!
    "The stretch's share of the fee, minor units"
    fee: BigInt!
    rate: Int!
    rate_increment: Int!
    interval_start: Int!
    description: String
    timing: RateTiming
  }

  input TransactionFilter {
    id: ID
    ids: [ID!]
    "One tag or a list of tags"
    account_tag: [String!]
    "One tag or a list of tags"
    transaction_tag: [String!]
    inbound: Boolean
    timestamp_begin_gte: DateTime
    timestamp_begin_gt: DateTime
    timestamp_begin_lte: DateTime
    timestamp_begin_lt: DateTime
    timestamp_end_gte: DateTime
    timestamp_end_gt: DateTime
    timestamp_end_lte: DateTime
    timestamp_end_lt: DateTime
    "Records whose destination starts with this text, as stored (taken literally, case-sensitive, at most 100 characters)"
    destination_prefix: String
    "Search box: a case-insensitive substring (taken literally, at most 100 characters) of transaction_tag, account_tag, source or destination"
    q: String
  }

  extend type Query {
    "One record by id, or by account_tag and transaction_tag; null when there is none."
    Transaction(id: ID, account_tag: String, transaction_tag: String): Transaction
    allTransactions(${listArgs('TransactionFilter')}): [Transaction!]
    _allTransactionsMeta(${listArgs('TransactionFilter')}): ListMetadata
    "Same as _allTransactionsMeta (the name the spec documents)."
    _allTransactions(${listArgs('TransactionFilter')}): ListMetadata
  }

  extend type Mutation {
    """
    Writes a record as given (raw record management: no rating, no balance effect). transaction_tag and
    account_tag (an existing account) are required. Defaults: inbound and failed false, duration 0, fee 0.
    """
    createTransaction(${writableArgs}): Transaction
    "Not meant for normal use: changes a record as given, without any balance effect."
    updateTransaction(${writableArgs}): Transaction
    "Deletes a record without any balance effect (rollbackTransaction on the agent credits the fee back). Returns it."
    deleteTransaction(id: ID, account_tag: String, transaction_tag: String): Transaction
  }
`;
