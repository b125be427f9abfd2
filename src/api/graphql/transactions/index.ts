import type { SchemaModule } from '../../../shared/infra/http/graphql';
import { transactionResolvers } from './resolvers';
import { transactionTypeDefs } from './schema';

export const transactionsModule: SchemaModule = { typeDefs: transactionTypeDefs, resolvers: transactionResolvers };
