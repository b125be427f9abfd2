import type { RedisClient } from '../redis';
import { withTimeout } from '../time-limit';

/** Claims `ARGV[1]` requests of the window's budget; starts the window (`ARGV[2]` ms) on its first claim. */
const CLAIM = `
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {count, ttl}`;

/** Part of RATE_LIMIT_MAX a process claims at once: a hundredth, so one Redis round trip per that many requests. */
const LEASE_SHARE = 100;
/** Past this many callers' leases, the expired ones are dropped (callers by IP are unbounded). */
const MAX_KEYS = 10_000;
/**
 * How long a request waits for a claim before it is let through uncounted (the plugin's skipOnError):
 * ioredis holds a command while Redis is away, and the agent's answers have a bound to keep.
 */
const CLAIM_WAIT_MS = 300;
/** After a claim that did not come back, the requests of this long are let through without trying. */
const UNREACHABLE_PAUSE_MS = 1000;

interface Lease {
  /** The shared count before this lease's first request. */
  base: number;
  granted: number;
  used: number;
  expiresAt: number;
}

type Result = { current: number; ttl: number };
type Callback = (err: Error | null, result?: Result) => void;

/**
 * A @fastify/rate-limit store whose counters live in Redis, shared by every process of a role, like
 * the plugin's own RedisStore, but claimed a block at a time: a process takes a hundredth of the
 * window's budget in one round trip and counts those requests in memory (issue 36: the plugin's store
 * cost every agent request a Redis script, three of a call's round trips). Nothing is admitted past
 * RATE_LIMIT_MAX in a window: each request is numbered inside the block its process claimed, and a
 * number past the limit is refused. What a process claimed and did not use before the window ends is
 * lost to the others: at most a hundredth of the budget per process (docs/DECISIONS.md). A budget
 * under 100 claims one request at a time, exactly as before.
 */
export function leasedRedisStore(redis: RedisClient, nameSpace: string) {
  return class LeasedRedisStore {
    private readonly leases = new Map<string, Lease>();
    private readonly claims = new Map<string, Promise<void>>();
    /** Until when Redis is taken as unreachable (a claim timed out): no claim is sent, none waited for. */
    private unreachableUntil = 0;

    constructor(
      _options?: unknown,
      private readonly prefix = nameSpace,
    ) {}

    incr(key: string, cb: Callback, timeWindow: number, max: number): void {
      const now = Date.now();
      const lease = this.leases.get(key);
      if (lease && lease.used < lease.granted && lease.expiresAt > now) {
        lease.used += 1;
        cb(null, { current: lease.base + lease.used, ttl: lease.expiresAt - now });
        return;
      }
      if (now < this.unreachableUntil) {
        cb(new Error('the rate limit counter (Redis) is unreachable'));
        return;
      }
      // Requests arriving while a claim is out wait for it rather than claim blocks of their own.
      let claim = this.claims.get(key);
      if (!claim) {
        const block = Math.max(1, Math.floor(max / LEASE_SHARE));
        const sent = redis.eval(CLAIM, 1, this.prefix + key, block, timeWindow) as Promise<[number, number]>;
        claim = withTimeout(sent, CLAIM_WAIT_MS)
          .then((answer) => {
            if (answer === 'timeout') {
              this.unreachableUntil = Date.now() + UNREACHABLE_PAUSE_MS;
              throw new Error('the rate limit counter (Redis) did not answer');
            }
            const [count, ttl] = answer;
            if (this.leases.size >= MAX_KEYS) this.forgetExpired();
            this.leases.set(key, { base: count - block, granted: block, used: 0, expiresAt: Date.now() + Math.max(1, ttl) });
          })
          .finally(() => this.claims.delete(key));
        this.claims.set(key, claim);
      }
      claim.then(
        () => this.incr(key, cb, timeWindow, max),
        (err: Error) => cb(err),
      );
    }

    private forgetExpired(): void {
      const now = Date.now();
      for (const [key, lease] of this.leases) if (lease.expiresAt <= now) this.leases.delete(key);
    }

    /** A route's own counters (a route configured with its own limit), as the plugin's RedisStore keys them. */
    child(routeOptions: { method?: unknown; url?: string; routeInfo?: { method: string; url: string } }): LeasedRedisStore {
      const route = routeOptions.routeInfo ?? { method: String(routeOptions.method), url: routeOptions.url ?? '' };
      return new LeasedRedisStore(undefined, `${this.prefix}${route.method}${route.url}-`);
    }
  };
}
