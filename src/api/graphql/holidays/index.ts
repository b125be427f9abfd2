import type { SchemaModule } from '../../../shared/infra/http/graphql';
import { holidayResolvers } from './resolvers';
import { holidayTypeDefs } from './schema';

export const holidaysModule: SchemaModule = { typeDefs: holidayTypeDefs, resolvers: holidayResolvers };
