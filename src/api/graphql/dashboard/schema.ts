export const dashboardTypeDefs = /* GraphQL */ `
  "Calls that ended within one time bucket."
  type TrafficBucket {
    "Start of the bucket (inclusive); it ends where the next one starts"
    start: DateTime!
    "Calls that ended in the bucket, each counted once (by its caller's own record; parents' shares and inbound receivers' records are left out)"
    calls: Int!
    "What their callers were charged: the sum of the fees of those records (minor units)"
    revenue: BigInt!
  }

  "Jobs of one BullMQ queue, by state."
  type QueueDepth {
    name: String!
    "Waiting to be taken (prioritized jobs included)"
    waiting: Int!
    active: Int!
    delayed: Int!
    "Kept for inspection (see the queue board, /admin/queues)"
    failed: Int!
  }

  """
  The console's home page. Computed at most every 15 seconds per API process (generated_at says when);
  every figure reads an index range or Redis counters, never a whole collection.
  """
  type Dashboard {
    "The last 60 minutes by minute, oldest first; the last bucket is the current minute (still filling). Calls count by the time they ended."
    calls_per_minute: [TrafficBucket!]! @embedded
    "The last 24 hours by hour, oldest first; the last bucket is the current hour (still filling)."
    revenue_per_hour: [TrafficBucket!]! @embedded
    "Calls running now (in progress, or ended and awaiting processing), each counted once; authorization reservations are not calls"
    running_calls: Int!
    """
    Accounts (prepaid and postpaid) whose balance is below their alert line, lowest balance first, at most 50:
    below zero, or below balance_alert_threshold (LOW_BALANCE_THRESHOLD when the account has none) when that
    is positive, as the balance alerts decide it.
    """
    accounts_below_threshold: [Account!]! @embedded
    "How many accounts are below their alert line (all of them, not only the 50 listed)"
    accounts_below_threshold_count: Int!
    "Every queue of the system"
    queues: [QueueDepth!]! @embedded
    """
    Worker processes connected to the processing queue (the ones rating ended calls): BullMQ's count of the
    Worker connections on that queue. Each worker process holds one, so a process started only for other
    queues is not counted.
    """
    workers: Int!
    "When these figures were computed"
    generated_at: DateTime!
  }

  extend type Query {
    "The console's home page figures (read scope); cached for 15 seconds per API process."
    dashboard: Dashboard!
  }
`;
