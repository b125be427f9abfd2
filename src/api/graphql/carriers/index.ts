import type { SchemaModule } from '../../../shared/http/graphql';
import { carrierResolvers } from './resolvers';
import { carrierTypeDefs } from './schema';

export const carriersModule: SchemaModule = { typeDefs: carrierTypeDefs, resolvers: carrierResolvers };
