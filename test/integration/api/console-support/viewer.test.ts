import { graphql } from '../../../support/harness';
import { ApiHarness, startApi } from '../api-harness';

const VIEWER = '{ viewer { name scopes } }';

describe('API viewer', () => {
  describe('with tokens', () => {
    let api: ApiHarness;
    const asToken = (secret: string) => graphql(api.url, VIEWER, undefined, { authorization: `Bearer ${secret}` });

    beforeAll(async () => {
      api = await startApi({
        RATING_TOKENS: 'console-ro:read:ro-secret-0123456789,console-rw:write+read:rw-secret-0123456789,pbx:agent:agent-secret-0123456789',
      });
    });

    afterAll(async () => {
      await api.close();
    });

    it('answers the token name and its scopes: a read-only token', async () => {
      expect(await asToken('ro-secret-0123456789')).toEqual({
        status: 200,
        body: { data: { viewer: { name: 'console-ro', scopes: ['read'] } } },
      });
    });

    it('answers the scopes in a fixed order (read, write, agent) whatever order they were configured in', async () => {
      expect((await asToken('rw-secret-0123456789')).body).toEqual({ data: { viewer: { name: 'console-rw', scopes: ['read', 'write'] } } });
    });

    it('what the console gates on it: adjustBalance needs write, the dashboard read', async () => {
      const adjust = 'mutation { adjustBalance(account_tag: "nobody", amount: 1, reason: "x") { balance } }';
      const as = (secret: string, query: string) => graphql(api.url, query, undefined, { authorization: `Bearer ${secret}` });
      expect((await as('ro-secret-0123456789', adjust)).status).toBe(403);
      // With write it runs (and answers NOT_FOUND for the unknown account).
      const written = await as('rw-secret-0123456789', adjust);
      expect(written.status).toBe(200);
      expect(written.body.errors?.[0].extensions?.code).toBe('NOT_FOUND');
      expect((await as('ro-secret-0123456789', '{ dashboard { workers } }')).body).toEqual({ data: { dashboard: { workers: 0 } } });
    });

    it('is a query: it needs the read scope like every query, and a token', async () => {
      expect((await asToken('agent-secret-0123456789')).status).toBe(403);
      expect((await graphql(api.url, VIEWER)).status).toBe(401);
      expect((await asToken('not-a-token-0123456789')).status).toBe(401);
    });
  });

  describe('without tokens (development)', () => {
    let api: ApiHarness;

    beforeAll(async () => {
      api = await startApi();
    });

    afterAll(async () => {
      await api.close();
    });

    it('answers the open principal with every scope', async () => {
      expect(await api.ok(VIEWER)).toEqual({ viewer: { name: 'anonymous', scopes: ['read', 'write', 'agent'] } });
    });
  });
});
