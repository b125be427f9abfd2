import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/api/app';
import { graphql } from '../../support/harness';
import { OwnMongo } from '../../support/own-mongo';

/**
 * The console's uploads (rate decks, CDR files) while MongoDB is unreachable: a clear 503 saying what to
 * do, never a 500; and once the store is back, the same deck applies as if the failed request had never
 * been sent. The API runs against a MongoDB-wire server of its own, stopped and restarted here.
 */
describe('uploads while MongoDB is unreachable', () => {
  let own: OwnMongo | undefined;
  let app: FastifyInstance | undefined;
  let url: string;

  beforeAll(async () => {
    own = await OwnMongo.start('rating-uploads-unavailable-', { API_MONGO_POOL_SIZE: '0' });
    app = await buildApi(own.ctx);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    const seeded = await graphql(
      url,
      `
        mutation {
          p: createPricelist(pricelist_tag: "retail", currency: USD) {
            id
          }
          c: createCarrier(carrier_tag: "acme", host: "10.0.0.1", port: 5060) {
            id
          }
        }
      `,
    );
    expect(seeded.body.errors).toBeUndefined();
  }, 180000);

  afterAll(async () => {
    await app?.close();
    await own?.close();
  });

  const post = async (pathAndQuery: string, body: string) => {
    const response = await fetch(`${url}${pathAndQuery}`, { method: 'POST', headers: { 'content-type': 'text/csv' }, body });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as Record<string, unknown>,
    };
  };
  const deck = 'prefix,rate\n44,10\n4420,8\n';
  const cdrs =
    'transaction_tag,account_tag,source,destination,timestamp_begin,timestamp_end\nc1,alice,1,44,2026-01-01T00:00:00Z,2026-01-01T00:01:00Z\n';

  it('answers 503 with what to do, not a 500; the deck applies in full once the store is back', async () => {
    await own!.stop();

    const deckAnswer = await post('/v1/rate-decks?pricelist_tag=retail&carrier_tag=acme&effective=2026-01-01T00:00:00Z', deck);
    expect(deckAnswer).toMatchObject({ status: 503, retryAfter: '5', body: { errors: [{ extensions: { code: 'INTERNAL_ERROR' } }] } });
    expect(JSON.stringify(deckAnswer.body)).toMatch(/unreachable.*send it again/);

    // Ten seconds later the token check's cache has run out: it cannot read MongoDB either, and answers
    // first, as clearly (nothing was done, try again).
    const importAnswer = await post('/v1/imports?format=csv', cdrs);
    expect(importAnswer).toMatchObject({ status: 503, retryAfter: '5' });
    expect(JSON.stringify(importAnswer.body)).toMatch(/unreachable.*(upload the file again|nothing was done; try again)/);

    await own!.restart();
    let again = await post('/v1/rate-decks?pricelist_tag=retail&carrier_tag=acme&effective=2026-01-01T00:00:00Z', deck);
    for (let i = 0; again.status === 503 && i < 60; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      again = await post('/v1/rate-decks?pricelist_tag=retail&carrier_tag=acme&effective=2026-01-01T00:00:00Z', deck);
    }
    expect(again).toMatchObject({ status: 200, body: { added: 2, changed: 0, unchanged: 0, removed: 0, rejected_count: 0 } });
  }, 180000);
});
