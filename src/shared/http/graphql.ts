import type { FastifyInstance } from 'fastify';
import mercurius, { IResolvers } from 'mercurius';
import type { AppContext } from '../context';

export interface SchemaModule {
  typeDefs: string;
  resolvers: IResolvers;
}

function mergeResolvers(modules: SchemaModule[]): IResolvers {
  const merged: Record<string, Record<string, unknown>> = {};
  for (const { resolvers } of modules) {
    for (const [type, fields] of Object.entries(resolvers)) {
      merged[type] = { ...(merged[type] ?? {}), ...(fields as Record<string, unknown>) };
    }
  }
  return merged as IResolvers;
}

/** Mounts `/graphql` built from schema modules; the resolvers get the process context. */
export async function registerGraphql(app: FastifyInstance, ctx: AppContext, modules: SchemaModule[]): Promise<void> {
  await app.register(mercurius, {
    schema: modules.map((m) => m.typeDefs).join('\n'),
    resolvers: mergeResolvers(modules),
    path: '/graphql',
    graphiql: ctx.config.nodeEnv !== 'production',
    context: () => ({ ctx }),
  });
}
