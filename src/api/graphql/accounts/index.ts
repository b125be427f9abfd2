import type { SchemaModule } from '../../../shared/infra/http/graphql';
import { accountResolvers } from './resolvers';
import { accountTypeDefs } from './schema';

export const accountsModule: SchemaModule = { typeDefs: accountTypeDefs, resolvers: accountResolvers };
