import type { SchemaModule } from '../../../shared/infra/http/graphql';
import { rateResolvers } from './resolvers';
import { rateTypeDefs } from './schema';

export const ratesModule: SchemaModule = { typeDefs: rateTypeDefs, resolvers: rateResolvers };
