import type { SchemaModule } from '../../../shared/infra/http/graphql';
import { importResolvers } from './resolvers';
import { importTypeDefs } from './schema';

export const importsModule: SchemaModule = { typeDefs: importTypeDefs, resolvers: importResolvers };
