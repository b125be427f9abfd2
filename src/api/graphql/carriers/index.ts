import type { SchemaModule } from '../../../shared/infra/http/graphql';
import { carrierResolvers } from './resolvers';
import { carrierTypeDefs } from './schema';

export const carriersModule: SchemaModule = { typeDefs: carrierTypeDefs, resolvers: carrierResolvers };
