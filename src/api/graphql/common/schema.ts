import { EMBEDDED_DIRECTIVE_TYPEDEFS } from '../../../shared/infra/graphql/limits';
import type { SchemaModule } from '../../../shared/infra/http/graphql';

/** Arguments of a list query and of its count query, with the resource's filter input. */
export const listArgs = (filterType: string): string =>
  `page: Int, perPage: Int, sortField: String, sortOrder: String, filter: ${filterType}`;

/** Types every resource module uses. */
export const commonModule: SchemaModule = {
  typeDefs: /* GraphQL */ `
    ${EMBEDDED_DIRECTIVE_TYPEDEFS}

    "Answer of the count queries (_allXsMeta): how many records match the filter, ignoring paging."
    type ListMetadata {
      count: Int!
    }
  `,
  resolvers: {},
};
