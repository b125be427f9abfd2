import { connectTo, socketUrl } from '../../../src/shared/infra/redis';

/** A Redis server on this machine named by its socket: the URL carries any path and database intact. */
describe('unix:// Redis URLs', () => {
  it.each([
    ['/tmp/rating-redis-abc/redis.sock', undefined],
    ['/srv/data dir/redis?#%/redis.sock', 3],
  ])('socketUrl(%j, %j) connects to that path and database', (path, db) => {
    const redis = connectTo(socketUrl(path, db), { lazyConnect: true });
    try {
      expect(redis.options.path).toBe(path);
      expect(redis.options.db ?? 0).toBe(db ?? 0);
    } finally {
      redis.disconnect();
    }
  });

  it('reads redis:// URLs as ioredis does', () => {
    const redis = connectTo('redis://127.0.0.1:6390/2', { lazyConnect: true });
    try {
      expect(redis.options).toMatchObject({ host: '127.0.0.1', port: 6390, db: 2 });
      expect(redis.options.path).toBeFalsy();
    } finally {
      redis.disconnect();
    }
  });
});
