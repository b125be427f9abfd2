import { listArgs } from '../common/schema';

const writableArgs = `id: ID, account_tag: String, type: AccountType, balance: BigInt, active: Boolean,
    max_concurrent_transactions: Int, name: String, notification_email: String, notification_mobile: String,
    carrier_tags: [String!], carrier_tags_override: [String!], customer_tag: String,
    linked_accounts: [String!], linked_accountsIds: [ID!], pricelist_tags: [String!], tags: [String!],
    balance_alert_threshold: BigInt, max_call_cost: BigInt, hourly_spend_limit: BigInt, daily_spend_limit: BigInt`;

export const accountTypeDefs = /* GraphQL */ `
  enum AccountType {
    PREPAID
    POSTPAID
  }

  "A call in progress, or ended and awaiting processing, on an account."
  type AccountTransaction {
    transaction_tag: String!
    source: String
    destination: String
    "Carrier address as host:port"
    carrier_ip: String
    "Per-minute rate of the rate the call was started with; null when none applies (inbound)"
    destination_rate: Int
    in_progress: Boolean!
    inbound: Boolean!
    timestamp_begin: DateTime
    "End of the call as a datetime, or an empty string while it has not ended"
    timestamp_end: String!
  }

  "A party that makes or receives calls."
  type Account {
    id: ID!
    account_tag: String!
    type: AccountType!
    "Minor currency units"
    balance: BigInt!
    active: Boolean!
    "Running calls allowed at once, inbound and outbound together; null: no limit"
    max_concurrent_transactions: Int
    name: String
    notification_email: String
    notification_mobile: String
    "Preferred carriers, moved to the front of least-cost routing"
    carrier_tags: [String!]
    "When set, the only carriers allowed, in this order"
    carrier_tags_override: [String!]
    customer_tag: String
    "Parent accounts (resellers); [] when none"
    linked_accounts: [Account!]!
    "Pricelists applied to the account's calls, in priority order"
    pricelist_tags: [String!]
    tags: [String!]
    "Low-balance alert threshold (minor units); null: the service default"
    balance_alert_threshold: BigInt
    "Spend limit: the most one call may cost (minor units); null: none"
    max_call_cost: BigInt
    "Spend limit: the most the account may spend in a rolling hour (its charges less refunds, minor units); null: none"
    hourly_spend_limit: BigInt
    "Spend limit: the most the account may spend in a rolling day; null: none"
    daily_spend_limit: BigInt
    "Calls in progress, or ended and awaiting processing (held in the account's document)"
    running_transactions: [AccountTransaction!]! @embedded
    "The rate a call to destination would be charged now; null without a destination or when unreachable"
    destination_rate(destination: String): PricelistRate
    "Carriers a call to destination would go out on now, best first, as PROTOCOL:host:port; null without a destination"
    least_cost_routing(destination: String): [String!]
  }

  input AccountFilter {
    id: ID
    ids: [ID!]
    "One tag or a list of tags"
    account_tag: [String!]
    "One tag or a list of tags"
    customer_tag: [String!]
    type: AccountType
    active: Boolean
    "true: accounts with a running transaction; false: accounts without"
    with_running_transactions: Boolean
    "true: accounts with a call in progress for longer than LONG_CALL_SECONDS; false: accounts without"
    with_long_running_transactions: Boolean
    "Search box: a case-insensitive substring (taken literally, at most 100 characters) of account_tag, name, customer_tag, notification_email or one of tags"
    q: String
  }

  extend type Query {
    "One account by id or account_tag; null when there is none."
    Account(id: ID, account_tag: String): Account
    allAccounts(${listArgs('AccountFilter')}): [Account!]
    _allAccountsMeta(${listArgs('AccountFilter')}): ListMetadata
  }

  extend type Mutation {
    """
    account_tag is required. Defaults: type PREPAID, balance 0, active true, no concurrency limit,
    linked_accounts [], id a new uuid4. Parents are given by tag (linked_accounts) or by id
    (linked_accountsIds, as react-admin sends them). Every tag named must exist.
    """
    createAccount(${writableArgs}): Account
    """
    Names the account by id (then account_tag renames it) or by account_tag. Omitted arguments are left
    unchanged; null clears a nullable field (linked_accounts: null clears to []).
    """
    updateAccount(${writableArgs}): Account
    "Refused (INVALID_REFERENCE) while other accounts link it or it has running transactions. Returns the deleted account."
    deleteAccount(id: ID, account_tag: String): Account
    "Adds amount (negative to take off) to the balance in one atomic step; returns the account. Both arguments are required."
    incrementAccountBalance(account_tag: String, amount: BigInt): Account
    """
    Adds amount (non-zero; negative to take off) to the balance as one ledger 'adjust' entry whose ref is
    reason (1 to 200 characters once surrounding blanks are removed); returns the account after it.
    idempotency_key (optional, 8 to 100 characters of letters, digits, '.', '_', ':' and '-') makes a retry
    safe: the entry's id is then derived from the key ('adjust:key:<key>') instead of being new, so the
    adjustment is applied once however often (and however concurrently) the same call is sent; a repeat
    answers the account as it is now without changing it. The key is permanent: reusing it for another
    account or amount is refused with BAD_USER_INPUT ("idempotency_key already used for a different
    adjustment") and changes nothing; the reason of a repeat is not compared (the first one is kept).
    Without a key every call is a new adjustment. Refused requests (validation, unknown account: NOT_FOUND,
    a balance leaving the 64-bit range) change nothing and do not use the key up.
    """
    adjustBalance(account_tag: String!, amount: BigInt!, reason: String!, idempotency_key: String): Account
  }
`;
