import type { ServiceContext } from '../service-context';
import { ensureTokenIndexes, findTokenByHash, hasActiveTokens, hasAnyToken } from './token-store';
import { hashSecret, Scope, SCOPES } from './token-format';

/** Who made a request. `open` is the anonymous caller of a development setup without tokens. */
export interface Principal {
  id: string;
  name: string;
  scopes: ReadonlySet<Scope>;
  source: 'env' | 'db' | 'open';
}

export const OPEN_PRINCIPAL: Principal = { id: 'open', name: 'anonymous', scopes: new Set(SCOPES), source: 'open' };

/** Bounds the cache when someone sprays random tokens; clearing it only costs lookups. */
const MAX_CACHED = 10000;

export class StartupRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupRefused';
  }
}

/**
 * Resolves bearer secrets to principals: bootstrap tokens from RATING_TOKENS in memory, others
 * from the `tokens` collection by hash. Answers (hits and misses) are cached for AUTH_CACHE_MS, so
 * the agent's hot path does not read MongoDB per request, and a revocation takes effect within it.
 */
export class Authenticator {
  private readonly cache = new Map<string, { principal: Principal | null; until: number }>();
  private open: { value: boolean; until: number } | undefined;
  private readonly bootstrap: Map<string, Principal>;

  constructor(private readonly ctx: ServiceContext) {
    this.bootstrap = new Map(
      ctx.config.bootstrapTokens.map((t) => [
        t.hash,
        { id: `env:${t.name}`, name: t.name, scopes: new Set(t.scopes), source: 'env' as const },
      ]),
    );
  }

  /**
   * The start check: production without any token refuses to start (it would lock everybody out
   * or, worse, tempt someone to disable authentication); development without tokens lets every
   * request through and says so.
   */
  async checkStartup(): Promise<void> {
    await ensureTokenIndexes(this.ctx.mongo.db);
    if (this.bootstrap.size > 0 || (await hasActiveTokens(this.ctx.mongo.db))) return;
    if (this.ctx.config.nodeEnv === 'production') {
      throw new StartupRefused(
        'NODE_ENV=production and no API tokens are configured: set RATING_TOKENS (name:scope1+scope2:secret) ' +
          'or create one with `npm run token -- create --name NAME --scopes read,write`',
      );
    }
    if (await hasAnyToken(this.ctx.mongo.db)) {
      this.ctx.logger.warn('every API token is revoked: all requests will be refused until one is created');
      return;
    }
    this.ctx.logger.warn('no API tokens configured: every request is allowed (development only; production refuses to start)');
  }

  /** Development before any token was ever created: every request passes. Never in production. */
  async isOpen(): Promise<boolean> {
    if (this.ctx.config.nodeEnv === 'production' || this.bootstrap.size > 0) return false;
    const now = Date.now();
    if (this.open && this.open.until > now) return this.open.value;
    const value = !(await hasAnyToken(this.ctx.mongo.db));
    this.open = { value, until: now + this.ctx.config.authCacheMs };
    return value;
  }

  /** The principal of a bearer secret, or null for an unknown or revoked one. */
  async authenticate(secret: string): Promise<Principal | null> {
    const hash = hashSecret(secret);
    const fromEnv = this.bootstrap.get(hash);
    if (fromEnv) return fromEnv;
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) return cached.principal;
    const doc = await findTokenByHash(this.ctx.mongo.db, hash);
    const principal: Principal | null =
      doc && doc.revoked_at === null ? { id: doc._id, name: doc.name, scopes: new Set(doc.scopes), source: 'db' } : null;
    if (this.ctx.config.authCacheMs > 0) {
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(hash, { principal, until: now + this.ctx.config.authCacheMs });
    }
    return principal;
  }
}
