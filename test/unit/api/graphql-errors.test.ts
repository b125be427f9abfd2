import { GraphQLError, Source } from 'graphql';
import type { MercuriusContext } from 'mercurius';
import { duplicateKeyFields } from '../../../src/api/store/errors';
import { ErrorCodes, ServiceError } from '../../../src/shared/infra/errors';
import { withoutTypename } from '../../../src/shared/infra/http/graphql';
import { formatGraphqlErrors, inputFieldOf } from '../../../src/shared/infra/http/graphql-errors';

function contextWithLog() {
  const log = { error: jest.fn(), info: jest.fn() };
  return { context: { app: { log }, reply: undefined } as unknown as MercuriusContext, log };
}

describe('inputFieldOf', () => {
  it('reads the field from a variable error, nested paths and list items included', () => {
    const message = (path: string) => `Variable "$f" got invalid value "x"${path}; Expected type "DateTime". must be a datetime`;
    expect(inputFieldOf(new GraphQLError(message('')))).toBe('f');
    expect(inputFieldOf(new GraphQLError(message(' at "f.timestamp_begin_gte"')))).toBe('timestamp_begin_gte');
    expect(inputFieldOf(new GraphQLError(message(' at "f.ids[2]"')))).toBe('ids');
  });

  it('reads the argument written before a refused literal', () => {
    const body = 'mutation { createAccount(account_tag: "a", balance: "1.5") { id } }';
    const error = new GraphQLError('Expected value of type "BigInt"', { source: new Source(body), positions: [body.indexOf('"1.5"')] });
    expect(inputFieldOf(error)).toBe('balance');
    const list = '{ x(ids: ["a", 1.5]) }';
    expect(inputFieldOf(new GraphQLError('bad', { source: new Source(list), positions: [list.indexOf('1.5')] }))).toBe('ids');
  });
});

describe('formatGraphqlErrors', () => {
  it('keeps a resolver ServiceError code and details with HTTP 200', () => {
    const { context } = contextWithLog();
    const error = new GraphQLError('port: must be from 1 to 65535', {
      path: ['createCarrier'],
      originalError: new ServiceError(ErrorCodes.BAD_USER_INPUT, 'port: must be from 1 to 65535', { field: 'port' }),
    });
    const { statusCode, response } = formatGraphqlErrors({ data: { createCarrier: null }, errors: [error] }, context);
    expect(statusCode).toBe(200);
    expect(response.errors).toEqual([
      { message: 'port: must be from 1 to 65535', path: ['createCarrier'], extensions: { code: 'BAD_USER_INPUT', field: 'port' } },
    ]);
  });

  it('hides and logs unexpected errors', () => {
    const { context, log } = contextWithLog();
    const error = new GraphQLError('connection reset by 10.1.2.3', {
      path: ['allAccounts'],
      originalError: new Error('connection reset by 10.1.2.3'),
    });
    const { statusCode, response } = formatGraphqlErrors({ data: { allAccounts: null }, errors: [error] }, context);
    expect(statusCode).toBe(200);
    expect(response.errors[0]).toEqual({ message: 'Internal server error', path: ['allAccounts'], extensions: { code: 'INTERNAL_ERROR' } });
    expect(log.error).toHaveBeenCalledTimes(1);
  });

  it('answers request errors before execution with their status', () => {
    const { context } = contextWithLog();
    const validation = Object.assign(new Error('Graphql validation error'), {
      code: 'MER_ERR_GQL_VALIDATION',
      statusCode: 400,
      errors: [new GraphQLError('Syntax Error: Unexpected <EOF>.'), new GraphQLError('Cannot query field "x" on type "Query".')],
    });
    const { statusCode, response } = formatGraphqlErrors(
      { errors: [new GraphQLError(validation.message, { originalError: validation })] },
      context,
    );
    expect(statusCode).toBe(400);
    expect(response.errors.map((e) => e.extensions?.code)).toEqual(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED']);
    const unauthenticated = new GraphQLError('Missing bearer token', {
      originalError: new ServiceError(ErrorCodes.UNAUTHENTICATED, 'Missing bearer token'),
    });
    expect(formatGraphqlErrors({ errors: [unauthenticated] }, context).statusCode).toBe(401);
    const tooLarge = Object.assign(new Error('Request body is too large'), { statusCode: 413 });
    expect(formatGraphqlErrors({ errors: [new GraphQLError(tooLarge.message, { originalError: tooLarge })] }, context)).toEqual({
      statusCode: 413,
      response: { data: null, errors: [{ message: 'Request body is too large', extensions: { code: 'BAD_REQUEST' } }] },
    });
  });
});

describe('duplicateKeyFields', () => {
  it('reads keyPattern (MongoDB) or the index name in the message', () => {
    expect(duplicateKeyFields({ code: 11000, keyPattern: { account_tag: 1 } })).toEqual(['account_tag']);
    expect(
      duplicateKeyFields({
        code: 11000,
        message: 'E11000 duplicate key error collection: db.rates index: pricelist_tag_1_carrier_tag_1_prefix_1 dup key: { ... }',
      }),
    ).toEqual(['pricelist_tag', 'carrier_tag', 'prefix']);
    expect(
      duplicateKeyFields({ code: 11000, message: 'E11000 duplicate key error collection: db.x index: _id_ dup key: { _id: "1" }' }),
    ).toEqual(['id']);
    expect(duplicateKeyFields({ code: 11000, message: 'something else' })).toEqual([]);
  });

  it('names account_tag when the clash is on the internal (account_tag, rev) index', () => {
    expect(duplicateKeyFields({ code: 11000, keyPattern: { account_tag: 1, rev: 1 } })).toEqual(['account_tag']);
    expect(duplicateKeyFields({ code: 11000, message: 'E11000 duplicate key error index: account_tag_1_rev_1 dup key' })).toEqual([
      'account_tag',
    ]);
  });
});

describe('withoutTypename', () => {
  it('drops __typename at any depth and keeps everything else', () => {
    expect(withoutTypename({ __typename: 'A', a: 1, b: [{ __typename: 'B', c: null }], d: { e: 'x', __typename: 'D' } })).toEqual({
      a: 1,
      b: [{ c: null }],
      d: { e: 'x' },
    });
  });
});
