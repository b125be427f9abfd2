import { buildApi } from '../../../src/api/app';
import type { AppContext } from '../../../src/shared/domain/context';
import { opIds } from '../../../src/shared/domain/ledger/model';
import { graphql } from '../../support/harness';
import { abandonableGraphql } from '../../support/http-json';
import { OwnRedis } from '../../support/own-redis';

/**
 * Management writes while Redis is unreachable (docs/API.md: "the write still succeeds and the failure
 * is logged"). The API runs against a redis-server of its own, stopped here. ioredis holds a command
 * while it reconnects, so an announcement of the change waited for as long as Redis stayed away: the
 * write committed and its request never answered, and a deleted account's ledger was never closed.
 */
describe('API writes while Redis is unreachable', () => {
  let own: OwnRedis | undefined;
  let ctx: AppContext;
  let url: string;

  beforeAll(async () => {
    const env = { API_MAX_CONCURRENT_QUERIES: '2', API_QUERY_WAIT_MS: '8000', MONGO_MAX_TIME_MS: '2000' };
    own = await OwnRedis.start('api_redis_down', env, buildApi);
    ({ ctx, url } = own);
  }, 60000);

  afterAll(async () => {
    await own?.close();
  });

  it('answers carrier, rate and account writes, and closes a deleted account ledger', async () => {
    const setup = await graphql(
      url,
      `
        mutation {
          a: createAccount(account_tag: "leaving", balance: 700) {
            id
          }
          c: createCarrier(carrier_tag: "before", host: "10.0.0.1", port: 5060) {
            id
          }
        }
      `,
    );
    expect(setup.body.errors).toBeUndefined();
    await own!.stopRedis();

    const carrier = await graphql(
      url,
      'mutation { createCarrier(carrier_tag: "while-down", host: "10.0.0.2", port: 5060) { carrier_tag } }',
    );
    expect(carrier.body).toEqual({ data: { createCarrier: { carrier_tag: 'while-down' } } });
    const renamed = await graphql(url, 'mutation { updateAccount(account_tag: "leaving", name: "Leaving") { name } }');
    expect(renamed.body).toEqual({ data: { updateAccount: { name: 'Leaving' } } });
    const deleted = await graphql<{ deleteAccount: { id: string; balance: number } }>(
      url,
      'mutation { deleteAccount(account_tag: "leaving") { id balance } }',
    );
    expect(deleted.body.errors).toBeUndefined();
    const id = deleted.body.data!.deleteAccount.id;
    expect(await ctx.mongo.collections.ledger.findOne({ _id: opIds.close(id) })).toMatchObject({
      amount: 0n,
      kind: 'close',
      account_tag: 'leaving',
    });
  }, 60000);

  it('gives back the turn of a request stuck on Redis whose client left, within MONGO_MAX_TIME_MS', async () => {
    // The dashboard reads queue depths from Redis: with Redis away, ioredis holds those reads.
    const stuck = Array.from({ length: 2 }, () => abandonableGraphql(url, '{ dashboard { queues { name waiting } } }'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const s of stuck) s.abort();
    for (const s of stuck) expect(await s.settled).toBe('AbortError');
    const after = await graphql(
      url,
      'mutation { createCarrier(carrier_tag: "after-stuck", host: "10.0.0.3", port: 5060) { carrier_tag } }',
    );
    expect(after.body).toEqual({ data: { createCarrier: { carrier_tag: 'after-stuck' } } });
  }, 60000);
});
