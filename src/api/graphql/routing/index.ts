import type { SchemaModule } from '../../../shared/infra/http/graphql';
import { routingResolvers } from './resolvers';
import { routingTypeDefs } from './schema';

export const routingModule: SchemaModule = { typeDefs: routingTypeDefs, resolvers: routingResolvers };
