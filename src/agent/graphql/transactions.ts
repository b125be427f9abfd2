import type { SchemaModule } from '../../shared/infra/http/graphql';
import { authorizationAnswerFields, operationAnswerFields, answerTypes, type AnswerField } from '../answers';
import { kinds, type FieldTable } from '../../shared/domain/validation/fields';
import type { AgentOperations, Input } from '../operations';
import { operationFields } from '../../shared/domain/calls/operations';

/** A GraphQL string literal: JSON's escapes are GraphQL's. */
const describe = (text: string): string => JSON.stringify(text);

/** An operation's arguments, from its field table: required fields are non-null, every kind a String (tags a list). */
function graphqlArguments(table: FieldTable): string {
  return Object.entries(table)
    .map(
      ([name, spec]) =>
        `${describe(`${spec.description} ${kinds[spec.kind].accepts}`)} ${name}: ${kinds[spec.kind].graphql}${spec.presence === 'required' ? '!' : ''}`,
    )
    .join('\n    ');
}

function graphqlFields(table: Record<string, AnswerField>): string {
  return Object.entries(table)
    .map(([name, field]) => `${describe(field.description)} ${name}: ${answerTypes[field.type].graphql}${field.nullable ? '' : '!'}`)
    .join('\n        ');
}

/**
 * Real-time operations. Answers are business outcomes, not errors: `{ ok, reason, ... }`, and for
 * authorization `{ authorized, unauthorized_reason, ... }`. `authorization` is a Query and, as in
 * Canyan's agent, also a Mutation (Canyan's clients send `mutation { authorization(...) }`).
 */
export function transactionsModule(operations: AgentOperations): SchemaModule {
  const authorization = (_root: unknown, args: Input) => operations.authorization(args);
  const authorizationField = `"Whether a call may start now, how long it may last and which carriers to try (with a transaction_tag it reserves a concurrency slot)."
        authorization(${graphqlArguments(operationFields.authorization)}): Authorization!`;
  return {
    typeDefs: /* GraphQL */ `
      "The answer of an agent operation: ok, or not ok with the reason (business refusals are not errors)."
      type TransactionResult {
        ${graphqlFields(operationAnswerFields)}
      }

      type Authorization {
        ${graphqlFields(authorizationAnswerFields)}
      }

      extend type Query {
        ${authorizationField}
      }

      extend type Mutation {
        ${authorizationField}
        beginTransaction(${graphqlArguments(operationFields.begin)}): TransactionResult!
        endTransaction(${graphqlArguments(operationFields.end)}): TransactionResult!
        recordTransaction(${graphqlArguments(operationFields.record)}): TransactionResult!
        rollbackTransaction(${graphqlArguments(operationFields.rollback)}): TransactionResult!
      }
    `,
    resolvers: {
      Query: { authorization },
      Mutation: {
        authorization,
        beginTransaction: (_root: unknown, args: Input) => operations.run('begin', args),
        endTransaction: (_root: unknown, args: Input) => operations.run('end', args),
        recordTransaction: (_root: unknown, args: Input) => operations.run('record', args),
        rollbackTransaction: (_root: unknown, args: Input) => operations.run('rollback', args),
      },
    },
  };
}
