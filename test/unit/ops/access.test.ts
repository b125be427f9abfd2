import type { FastifyRequest } from 'fastify';
import { agentAccess, apiAccess, graphqlScopes } from '../../../src/shared/infra/auth/access';
import { credentialOf } from '../../../src/shared/infra/http/auth-plugin';

const post = (body: unknown) => ({ method: 'POST', body, query: {} }) as unknown as FastifyRequest;
const get = (query: Record<string, string>) => ({ method: 'GET', body: undefined, query }) as unknown as FastifyRequest;
const withHeader = (authorization?: string) => ({ headers: { authorization } }) as unknown as FastifyRequest;

describe('access policies', () => {
  it('leaves probes and metrics open, and protects everything else', () => {
    for (const path of ['/health', '/ready', '/metrics']) {
      expect(apiAccess(path)).toBe('open');
      expect(agentAccess(path)).toBe('open');
    }
    expect(apiAccess('/graphql')).toBe('graphql');
    expect(apiAccess('/admin/queues')).toEqual({ anyOf: ['write'] });
    expect(apiAccess('/admin/queues/api/queues')).toEqual({ anyOf: ['write'] });
    expect(apiAccess('/admin/queuesX')).toEqual({ anyOf: ['read', 'write'] });
    expect(apiAccess('/elsewhere')).toEqual({ anyOf: ['read', 'write'] });
    expect(agentAccess('/graphql')).toEqual({ anyOf: ['agent'] });
    expect(agentAccess('/v1/begin_transaction')).toEqual({ anyOf: ['agent'] });
  });

  it("leaves the operator console's static files open on the API only", () => {
    for (const path of ['/console', '/console/', '/console/*', '/console/assets/index-abc123.js', '/console/accounts/1/show']) {
      expect(apiAccess(path)).toBe('open');
      expect(agentAccess(path)).toEqual({ anyOf: ['agent'] });
    }
    expect(apiAccess('/consoleX')).toEqual({ anyOf: ['read', 'write'] });
    expect(apiAccess('/graphql')).toBe('graphql');
  });

  it('asks write for uploads (rate decks, CDR files), before their body is read', () => {
    expect(apiAccess('/v1/rate-decks')).toEqual({ anyOf: ['write'] });
    expect(apiAccess('/v1/imports')).toEqual({ anyOf: ['write'] });
  });
});

describe('graphqlScopes', () => {
  it.each([
    ['{ version }', undefined, ['read']],
    ['query { version }', undefined, ['read']],
    ['mutation { createAccount { id } }', undefined, ['write']],
    ['query A { version } mutation B { x }', 'A', ['read']],
    ['query A { version } mutation B { x }', 'B', ['write']],
    ['query A { version } mutation B { x }', undefined, ['read', 'write']],
    ['query A { version } mutation B { x }', 'Nope', ['read', 'write']],
    ['subscription { ticks }', undefined, ['read']],
  ])('%s (operation %s) needs %j', (query, operationName, expected) => {
    expect([...(graphqlScopes(post({ query, operationName })) ?? [])].sort()).toEqual(expected);
  });

  it('reads GET queries, raw application/graphql bodies and batches', () => {
    expect([...graphqlScopes(get({ query: '{ version }' }))!]).toEqual(['read']);
    expect([...graphqlScopes(post('mutation { x }'))!]).toEqual(['write']);
    expect([...graphqlScopes(post([{ query: '{ a }' }, { query: 'mutation { b }' }]))!].sort()).toEqual(['read', 'write']);
  });

  it('returns null for what cannot be parsed', () => {
    expect(graphqlScopes(post({ query: '{ broken' }))).toBeNull();
    expect(graphqlScopes(post({}))).toBeNull();
    expect(graphqlScopes(post(null))).toBeNull();
  });
});

describe('credentialOf', () => {
  it('reads Bearer and Basic (password) credentials', () => {
    expect(credentialOf(withHeader('Bearer abc.def'))).toBe('abc.def');
    expect(credentialOf(withHeader('bearer   abc'))).toBe('abc');
    expect(credentialOf(withHeader(`Basic ${Buffer.from('admin:s3cr:et').toString('base64')}`))).toBe('s3cr:et');
    expect(credentialOf(withHeader(`Basic ${Buffer.from('admin:').toString('base64')}`))).toBeNull();
    expect(credentialOf(withHeader('Token abc'))).toBeNull();
    expect(credentialOf(withHeader(undefined))).toBeNull();
  });
});
