import type { SchemaModule } from '../../../shared/infra/http/graphql';
import { dashboardResolvers } from './resolvers';
import { dashboardTypeDefs } from './schema';

export const dashboardModule: SchemaModule = { typeDefs: dashboardTypeDefs, resolvers: dashboardResolvers };
