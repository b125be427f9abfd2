import type { SchemaModule } from '../../shared/infra/http/graphql';
import { serviceVersion } from '../../shared/infra/version';
import type { AgentOperations } from '../operations';
import { recordBatchModule } from './record-batch';
import { transactionsModule } from './transactions';

const base: SchemaModule = {
  typeDefs: /* GraphQL */ `
    type Query {
      "Version of the running service."
      version: String!
    }
    type Mutation {
      _noop: Boolean @deprecated(reason: "placeholder so the Mutation type is never empty")
    }
  `,
  resolvers: {
    Query: { version: () => serviceVersion },
    Mutation: { _noop: () => null },
  },
};

export function agentModules(operations: AgentOperations): SchemaModule[] {
  return [base, transactionsModule(operations), recordBatchModule()];
}
