import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AccessPolicy, graphqlScopes } from '../auth/access';
import { Authenticator, OPEN_PRINCIPAL, Principal } from '../auth/authenticator';
import type { Scope } from '../auth/token-format';
import type { ServiceContext } from '../service-context';
import { ErrorCodes } from '../errors';
import { isStoreUnreachable, STORE_UNREACHABLE } from '../store-errors';
import { sendError } from './error-reply';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who made the request; null on open routes (health, readiness, metrics). */
    principal: Principal | null;
  }
}

export interface AuthPluginOptions {
  ctx: ServiceContext;
  policy: AccessPolicy;
}

/**
 * `Authorization: Bearer <secret>`. Basic authentication with the secret as password is accepted
 * too, so a browser can open the queue board (it prompts for it and resends it on every asset).
 */
export function credentialOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer) return bearer[1];
  const basic = /^Basic\s+(\S+)\s*$/i.exec(header);
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const password = colon < 0 ? decoded : decoded.slice(colon + 1);
    return password === '' ? null : password;
  }
  return null;
}

/** The path the policy judges: the matched route pattern, or the raw path when nothing matched. */
function pathOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? request.url.split('?')[0];
}

function forbidden(reply: FastifyReply, needed: Scope[], all: boolean): FastifyReply {
  const list = needed.map((s) => `"${s}"`).join(all ? ' and ' : ' or ');
  return sendError(reply, 403, ErrorCodes.FORBIDDEN, `This request needs the ${list} scope`, { requiredScopes: needed });
}

/**
 * Decorates each request with its principal and enforces the policy: no or a bad token is
 * UNAUTHENTICATED (401); a token without the scope is FORBIDDEN (403). GraphQL requests are
 * judged by their operations once the body is parsed: queries need `read`, mutations `write`.
 * Registers the start check: production without tokens refuses to start.
 */
const authPlugin: FastifyPluginAsync<AuthPluginOptions> = async (app, { ctx, policy }) => {
  const authenticator = new Authenticator(ctx);
  await authenticator.checkStartup();
  app.decorateRequest('principal', null);

  app.addHook('onRequest', async (request, reply) => {
    const requirement = policy(pathOf(request));
    if (requirement === 'open') return;
    const secret = credentialOf(request);
    let principal: Principal | null = null;
    try {
      if (await authenticator.isOpen()) {
        principal = OPEN_PRINCIPAL;
      } else if (secret !== null) {
        principal = await authenticator.authenticate(secret);
      }
    } catch (err) {
      // Tokens live in MongoDB: unreachable, the request cannot be judged. A clear "try again", never a 500.
      if (!isStoreUnreachable(err)) throw err;
      request.log.warn({ err }, 'token check: MongoDB is unreachable');
      void reply.header('retry-after', '5');
      return sendError(reply, 503, ErrorCodes.INTERNAL_ERROR, STORE_UNREACHABLE);
    }
    if (principal === null) {
      const admin = pathOf(request).startsWith('/admin/');
      reply.header('www-authenticate', admin ? 'Basic realm="call rating admin", charset="UTF-8"' : 'Bearer realm="call rating"');
      return sendError(reply, 401, ErrorCodes.UNAUTHENTICATED, secret === null ? 'Missing bearer token' : 'Invalid or revoked token');
    }
    request.principal = principal;
    if (requirement !== 'graphql' && !requirement.anyOf.some((s) => principal.scopes.has(s))) {
      return forbidden(reply, requirement.anyOf, false);
    }
  });

  app.addHook('preHandler', async (request, reply) => {
    const principal = request.principal;
    if (principal === null || policy(pathOf(request)) !== 'graphql') return;
    const needed = graphqlScopes(request);
    if (needed === null) {
      if (!principal.scopes.has('read') && !principal.scopes.has('write')) return forbidden(reply, ['read', 'write'], false);
      return;
    }
    const missing = [...needed].filter((s) => !principal.scopes.has(s));
    if (missing.length > 0) return forbidden(reply, [...needed], true);
  });
};

export default fp(authPlugin, { name: 'auth' });
