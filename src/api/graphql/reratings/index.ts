import type { SchemaModule } from '../../../shared/infra/http/graphql';
import { reratingResolvers } from './resolvers';
import { reratingTypeDefs } from './schema';

export const reratingsModule: SchemaModule = { typeDefs: reratingTypeDefs, resolvers: reratingResolvers };
