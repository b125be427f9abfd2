import { buildSchema, execute, GraphQLError, parse } from 'graphql';
import type { MercuriusContext } from 'mercurius';
import { formatGraphqlErrors } from '../../../src/shared/infra/http/graphql-errors';

/** How formatGraphqlErrors classifies the request errors of issue 10 (no I/O: graphql-js' own results). */

const schema = buildSchema('type Query { version: String echo(s: String!): String } type Mutation { touch: String }');
const context = { app: { log: { error: jest.fn() } }, reply: undefined } as unknown as MercuriusContext;

/** What graphql-js answers for a request it cannot start: a result with errors and no data. */
function run(query: string, variableValues?: Record<string, unknown>, operationName?: string) {
  const result = execute({ schema, document: parse(query), variableValues, operationName }) as Awaited<ReturnType<typeof execute>>;
  return formatGraphqlErrors(result, context);
}

/** The same errors as Mercurius reports them when variables came with the request (wrapped). */
function wrapped(messages: string[]) {
  const validation = Object.assign(new Error('Graphql validation error'), {
    code: 'MER_ERR_GQL_VALIDATION',
    statusCode: 400,
    errors: messages.map((m) => new GraphQLError(m)),
  });
  return formatGraphqlErrors({ errors: [new GraphQLError(validation.message, { originalError: validation })] }, context);
}

describe('request errors graphql-js raises when execution starts', () => {
  it('are BAD_REQUEST with HTTP 400, not INTERNAL_ERROR', () => {
    for (const [query, operationName, message] of [
      ['subscription { version }', undefined, /subscription/],
      ['query A { version } query B { version }', 'C', /Unknown operation named "C"/],
      ['query A { version } mutation B { touch }', undefined, /Must provide operation name/],
    ] as const) {
      const { statusCode, response } = run(query, undefined, operationName);
      expect({ query, statusCode, code: response.errors[0].extensions?.code }).toEqual({ query, statusCode: 400, code: 'BAD_REQUEST' });
      expect(response.errors[0].message).toMatch(message);
    }
    // Whether or not Mercurius wrapped them (it does when variables came with the request).
    expect(wrapped(['Unknown operation named "C".']).response.errors[0].extensions?.code).toBe('BAD_REQUEST');
  });

  it('are BAD_USER_INPUT naming the variable for a refused variable value', () => {
    const missing = run('query ($s: String!) { echo(s: $s) }');
    expect(missing.statusCode).toBe(400);
    expect(missing.response.errors[0]).toMatchObject({
      message: expect.stringMatching(/^Variable "\$s" of required type "String!" was not provided/),
      extensions: { code: 'BAD_USER_INPUT', field: 's' },
    });
    const wrong = run('query ($s: String!) { echo(s: $s) }', { s: 5 });
    expect(wrong.response.errors[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT', field: 's' } });
    expect(
      wrapped(['Variable "$f" got invalid value 5 at "f.ids[0]"; ID cannot represent value: 5']).response.errors[0].extensions,
    ).toEqual({ code: 'BAD_USER_INPUT', field: 'ids' });
    expect(wrapped(['Variable "$s" of non-null type "String!" must not be null.']).response.errors[0].extensions).toEqual({
      code: 'BAD_USER_INPUT',
      field: 's',
    });
  });

  it('leave document errors about variables to GRAPHQL_VALIDATION_FAILED', () => {
    expect(wrapped(['Variable "$s" is never used.']).response.errors[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('answer a body Fastify refused by its schema as BAD_REQUEST', () => {
    const shape = Object.assign(new Error('body/variables must be object,null'), { validation: [], validationContext: 'body' });
    const validation = Object.assign(new Error('Graphql validation error'), {
      code: 'MER_ERR_GQL_VALIDATION',
      statusCode: 400,
      errors: [shape],
    });
    const { statusCode, response } = formatGraphqlErrors(
      { errors: [new GraphQLError(validation.message, { originalError: validation })] },
      context,
    );
    expect({ statusCode, errors: response.errors }).toEqual({
      statusCode: 400,
      errors: [{ message: 'body/variables must be object,null', extensions: { code: 'BAD_REQUEST' } }],
    });
  });

  it('still hide an unexpected failure before execution as INTERNAL_ERROR, HTTP 500', () => {
    const { statusCode, response } = formatGraphqlErrors(
      { errors: [new GraphQLError('boom', { originalError: new TypeError('boom') })] },
      context,
    );
    expect({ statusCode, errors: response.errors }).toEqual({
      statusCode: 500,
      errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_ERROR' } }],
    });
  });
});
