import type { SchemaModule } from '../../../shared/infra/http/graphql';
import { pricelistResolvers } from './resolvers';
import { pricelistTypeDefs } from './schema';

export const pricelistsModule: SchemaModule = { typeDefs: pricelistTypeDefs, resolvers: pricelistResolvers };
