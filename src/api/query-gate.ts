import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AppContext } from '../shared/domain/context';
import { ErrorCodes } from '../shared/infra/errors';
import { sendError } from '../shared/infra/http/error-reply';

/** Gives a turn back; calling it more than once does nothing. */
export type Release = () => void;

interface Waiter {
  grant(): void;
}

/**
 * A counting semaphore with a first-come first-served queue and a bounded wait: at most `max` holders
 * at once; the others wait, in order, at most `waitMs` each. `max` 0 means no limit.
 */
export class QueryGate {
  private holders = 0;
  private readonly waiters: Waiter[] = [];

  constructor(
    readonly max: number,
    readonly waitMs: number,
  ) {}

  /** Turns held now. */
  get running(): number {
    return this.holders;
  }

  /** Requests waiting for a turn now. */
  get queued(): number {
    return this.waiters.length;
  }

  /**
   * A turn: its release, once one is free (at once when one is and nobody waits before), or null when
   * none came within `waitMs` or `signal` was aborted first (the caller gave up; it holds nothing).
   */
  acquire(signal?: AbortSignal): Promise<Release | null> {
    if (this.max === 0) return Promise.resolve(() => undefined);
    if (signal?.aborted) return Promise.resolve(null);
    if (this.holders < this.max && this.waiters.length === 0) {
      this.holders++;
      return Promise.resolve(this.releaser());
    }
    if (this.waitMs === 0) return Promise.resolve(null);
    return new Promise((resolve) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', leave);
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(null);
      };
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', leave);
          resolve(this.releaser());
        },
      };
      const timer = setTimeout(leave, this.waitMs);
      signal?.addEventListener('abort', leave, { once: true });
      this.waiters.push(waiter);
    });
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holders--;
      this.admit();
    };
  }

  private admit(): void {
    while (this.holders < this.max && this.waiters.length > 0) {
      const next = this.waiters.shift()!;
      this.holders++;
      next.grant();
    }
  }
}

const GRAPHQL_PATH = '/graphql';

/**
 * At most API_MAX_CONCURRENT_QUERIES GraphQL requests of the management API run at once in this
 * process, from the moment their body is read (after authentication and the rate limit) until their
 * answer is made (serialized); a request whose client left keeps its turn while it still runs, at most
 * MONGO_MAX_TIME_MS more (what its reads may take; one waiting on an unreachable Redis would otherwise
 * hold it for the whole outage). The
 * others wait in arrival order, at most API_QUERY_WAIT_MS, then get HTTP 429 RATE_LIMITED. In
 * single-process mode (`npm start`) the API shares its event loop with the agent and the workers:
 * however many clients send the most expensive queries the limits allow, only that many are being
 * executed, so the agent's answers are never queued behind all of them (issue 10, docs/BENCHMARKS.md).
 */
const queryGatePlugin: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const { apiMaxConcurrentQueries: max, apiQueryWaitMs: waitMs } = ctx.config;
  if (max === 0) return;
  const gate = new QueryGate(max, waitMs);
  app.decorate('queryGate', gate);

  app.decorateRequest('queryTurn', null);
  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.url !== GRAPHQL_PATH) return;
    // The response's 'close' comes once it is written, or when the connection ends before that: while
    // the request waits, that is the client giving up; while it runs (its turn not yet given back), its
    // turn is kept at most MONGO_MAX_TIME_MS more.
    const gone = new AbortController();
    reply.raw.once('close', () => {
      gone.abort();
      const turn = request.queryTurn;
      if (turn) setTimeout(turn, ctx.config.mongoMaxTimeMs).unref();
    });
    const release = await gate.acquire(gone.signal);
    if (release && !gone.signal.aborted) {
      request.queryTurn = release;
      return;
    }
    release?.();
    if (gone.signal.aborted) {
      // Nobody left to answer: the request must not run (a mutation would happen unasked, outside a turn).
      reply.hijack();
      return;
    }
    request.log.warn(
      { running: gate.running, queued: gate.queued, max, waitMs },
      'API GraphQL request refused: no turn within API_QUERY_WAIT_MS',
    );
    reply.header('retry-after', 1);
    return sendError(
      reply,
      429,
      ErrorCodes.RATE_LIMITED,
      `This API process is already running ${max} GraphQL requests (API_MAX_CONCURRENT_QUERIES) and none finished within ${waitMs} ms (API_QUERY_WAIT_MS); retry later`,
      { retryAfter: 1, limit: max, waitMs },
    );
  });
  // The turn is given back once the answer is made (serialized: onSend), not as soon as the client goes:
  // a query whose client left goes on running, and the next one waits for it (bounded above). The
  // answer is made whether or not anyone is left to read it; onResponse covers a reply that skipped onSend.
  const giveBack = async (request: FastifyRequest) => {
    request.queryTurn?.();
    request.queryTurn = null;
  };
  app.addHook('onSend', giveBack);
  app.addHook('onResponse', giveBack);
};

declare module 'fastify' {
  interface FastifyRequest {
    /** The GraphQL request's turn, while it holds one (query-gate.ts). */
    queryTurn: Release | null;
  }
  interface FastifyInstance {
    /** Present when API_MAX_CONCURRENT_QUERIES is not 0. */
    queryGate?: QueryGate;
  }
}

export default fp(queryGatePlugin, { name: 'query-gate' });
