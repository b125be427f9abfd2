import type { SchemaModule } from '../../shared/http/graphql';
import type { AgentOperations, Input } from '../operations';

/** Real-time operations; each answers `{ ok, reason }` (reason null on success). */
export function transactionsModule(operations: AgentOperations): SchemaModule {
  const call = `transaction_tag: String!, account_tag: String!, source: String!, destination: String!,
    source_ip: String, carrier_ip: String, tags: [String!], destination_account_tag: String, timestamp_auth: String`;
  return {
    typeDefs: /* GraphQL */ `
      "The answer of an agent operation: ok, or not ok with the reason (business refusals are not errors)."
      type TransactionResult {
        ok: Boolean!
        "NOT_FOUND, NOT_ACTIVE, UNREACHABLE_DESTINATION, TOO_MANY_RUNNING_TRANSACTIONS, BALANCE_INSUFFICIENT, DUPLICATE_TRANSACTION, ALREADY_ENDED, BUSY, TIMEOUT; null on success"
        reason: String
      }

      type Authorization {
        authorized: Boolean!
        unauthorized_reason: String
        "Longest call in seconds the available balance pays for (capped at 14400)"
        max_available_units: Int!
        "Balance of the calling account in minor units (decimal string, 64-bit)"
        balance: String
        "Carriers in least-cost order, as PROTOCOL:host:port"
        carriers: [String!]!
      }

      extend type Query {
        "Whether a call may start now, how long it may last and which carriers to try (records nothing)."
        authorization(transaction_tag: String, account_tag: String!, destination_account_tag: String, source: String, destination: String!): Authorization!
      }

      extend type Mutation {
        beginTransaction(${call}, timestamp_begin: String): TransactionResult!
        endTransaction(transaction_tag: String!, account_tag: String!, timestamp_end: String): TransactionResult!
        recordTransaction(${call}, timestamp_begin: String!, timestamp_end: String!): TransactionResult!
        rollbackTransaction(transaction_tag: String!, account_tag: String!): TransactionResult!
      }
    `,
    resolvers: {
      Query: {
        authorization: (_root: unknown, args: Input) => operations.authorization(args),
      },
      Mutation: {
        beginTransaction: (_root: unknown, args: Input) => operations.run('begin', args),
        endTransaction: (_root: unknown, args: Input) => operations.run('end', args),
        recordTransaction: (_root: unknown, args: Input) => operations.run('record', args),
        rollbackTransaction: (_root: unknown, args: Input) => operations.run('rollback', args),
      },
    },
  };
}
