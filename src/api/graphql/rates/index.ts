import type { SchemaModule } from '../../../shared/http/graphql';
import { rateResolvers } from './resolvers';
import { rateTypeDefs } from './schema';

export const ratesModule: SchemaModule = { typeDefs: rateTypeDefs, resolvers: rateResolvers };
