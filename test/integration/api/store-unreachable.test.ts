import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/api/app';
import { OwnMongo } from '../../support/own-mongo';

/**
 * The management API while MongoDB is unreachable: a clear answer saying to try again, never a 500 with
 * the driver's message. Tokens are checked against MongoDB (AUTH_CACHE_MS 0: every request looks its
 * token up), except the bootstrap token of RATING_TOKENS, which lets a request reach its resolvers.
 */
describe('the API while MongoDB is unreachable', () => {
  let own: OwnMongo | undefined;
  let app: FastifyInstance | undefined;
  let url: string;
  const secret = 'bootstrap-secret-0123456789abcdef';

  beforeAll(async () => {
    own = await OwnMongo.start('rating-api-unreachable-', {
      API_MONGO_POOL_SIZE: '0',
      AUTH_CACHE_MS: '0',
      RATING_TOKENS: `ops:read+write:${secret}`,
    });
    app = await buildApi(own.ctx);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  }, 180000);

  afterAll(async () => {
    await app?.close();
    await own?.close();
  });

  const query = async (token: string, body: string) => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: body }),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), text: await response.text() };
  };

  it('answers a token it must look up with 503 and what to do, and a resolver that cannot read with a clear error', async () => {
    expect((await query(secret, '{ allAccounts { id } }')).status).toBe(200);
    await own!.stop();

    const lookedUp = await query('a-token-stored-in-mongodb', '{ allAccounts { id } }');
    expect(lookedUp).toMatchObject({ status: 503, retryAfter: '5' });
    expect(JSON.parse(lookedUp.text)).toMatchObject({ errors: [{ extensions: { code: 'INTERNAL_ERROR' } }] });
    expect(lookedUp.text).toMatch(/unreachable.*try again/i);

    const resolved = await query(secret, '{ allAccounts { id } }');
    expect(resolved.status).not.toBe(500);
    expect(JSON.parse(resolved.text)).toMatchObject({ errors: [{ extensions: { code: 'INTERNAL_ERROR' } }] });
    expect(resolved.text).toMatch(/unreachable.*try again/i);
    expect(resolved.text).not.toMatch(/Mongo|ECONNREFUSED|selection/i);
  }, 60000);
});
