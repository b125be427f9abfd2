import { MongoNetworkError, MongoNotConnectedError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb';

/**
 * A Redis read given up after its bound: ioredis holds a command while Redis is away rather than
 * failing it, so a read that must not wait for the outage to end (a page's figures) is raced against a
 * timer, and this is its failure.
 */
export class RedisUnanswered extends Error {
  constructor(what: string) {
    super(`Redis did not answer ${what} in time`);
    this.name = 'RedisUnanswered';
  }
}

/**
 * Whether an error means a store (MongoDB, Redis) could not be reached, as opposed to a bug: HTTP
 * surfaces answer it with 503 and a clear "try again", never a 500. MongoNetworkTimeoutError is a
 * MongoNetworkError; ioredis gives up with MaxRetriesPerRequestError or "Connection is closed.".
 */
export function isStoreUnreachable(err: unknown): boolean {
  if (err instanceof RedisUnanswered) return true;
  if (err instanceof MongoNetworkError || err instanceof MongoServerSelectionError) return true;
  if (err instanceof MongoNotConnectedError || err instanceof MongoTopologyClosedError) return true;
  const e = err as { name?: unknown; message?: unknown } | null;
  return e?.name === 'MaxRetriesPerRequestError' || e?.message === 'Connection is closed.';
}

/** What a request answered while a store is unreachable says: nothing was done, send it again. */
export const STORE_UNREACHABLE = 'The database is unreachable: nothing was done; try again in a moment';
