import { SCOPES } from '../../../shared/infra/auth/token-format';
import { ErrorCodes, ServiceError } from '../../../shared/infra/errors';
import type { ApiContext, ApiResolvers } from '../context';

export const viewerResolvers: ApiResolvers = {
  Query: {
    // The auth plugin put the principal on the request before GraphQL ran (/graphql is never open).
    viewer: (_root: unknown, _args: unknown, { reply }: ApiContext) => {
      const principal = reply.request.principal;
      if (!principal) throw new ServiceError(ErrorCodes.UNAUTHENTICATED, 'No principal on this request');
      return { name: principal.name, scopes: SCOPES.filter((s) => principal.scopes.has(s)) };
    },
  },
};
