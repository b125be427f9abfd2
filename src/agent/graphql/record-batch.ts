import type { SchemaModule } from '../../shared/infra/http/graphql';
import type { AppContext } from '../../shared/domain/context';
import { recordBatchService } from '../record-batch';

/**
 * recordTransactions(transactions: [RecordInput!]!): the batch form of recordTransaction. The input
 * fields are nullable on purpose: a missing field is that item's BAD_USER_INPUT answer, not a
 * schema error that would refuse the whole batch.
 */
export function recordBatchModule(): SchemaModule {
  return {
    typeDefs: /* GraphQL */ `
      "One finished call; the fields of recordTransaction (required ones are checked per item)."
      input RecordInput {
        transaction_tag: String
        account_tag: String
        source: String
        destination: String
        source_ip: String
        carrier_ip: String
        tags: [String!]
        destination_account_tag: String
        timestamp_auth: String
        timestamp_begin: String
        timestamp_end: String
      }

      "The answer for one item of recordTransactions, by its position in the request."
      type RecordResult {
        index: Int!
        transaction_tag: String
        ok: Boolean!
        "As recordTransaction (NOT_FOUND, NOT_ACTIVE, UNREACHABLE_DESTINATION, DUPLICATE_TRANSACTION, TIMEOUT, UNAVAILABLE, OUTCOME_UNKNOWN), or BAD_USER_INPUT: <field>: <problem>; null when ok"
        reason: String
      }

      extend type Mutation {
        "Records up to RECORD_BATCH_MAX finished calls in one request, answering each one."
        recordTransactions(transactions: [RecordInput!]!): [RecordResult!]!
      }
    `,
    resolvers: {
      Mutation: {
        recordTransactions: async (_root: unknown, args: { transactions: unknown[] }, context: { ctx: AppContext }) =>
          (await recordBatchService(context.ctx)).record(args.transactions),
      },
    },
  };
}
