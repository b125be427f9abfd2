import type { SchemaModule } from '../../../shared/infra/http/graphql';
import { viewerResolvers } from './resolvers';
import { viewerTypeDefs } from './schema';

export const viewerModule: SchemaModule = { typeDefs: viewerTypeDefs, resolvers: viewerResolvers };
