import { ConfigError, loadConfig } from '../../../src/shared/infra/config';
import { bullmqPrefix } from '../../../src/shared/domain/queues/queues';
import { formatRedisNodes, parseRedisNodes } from '../../../src/shared/infra/redis-nodes';

describe('REDIS_CLUSTER_NODES', () => {
  it('is unset by default: one Redis server, plain queue prefix', () => {
    const config = loadConfig({});
    expect(config.redisClusterNodes).toBeUndefined();
    expect(bullmqPrefix(config)).toBe('rating');
  });

  it('reads comma-separated host:port seed nodes (IPv6 in brackets); queues get the hash-tagged prefix', () => {
    const config = loadConfig({ REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-2.internal:7001,[::1]:7002 ', QUEUE_PREFIX: 'prod' });
    expect(config.redisClusterNodes).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-2.internal', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
    expect(config.redisUrl).toBeUndefined();
    expect(bullmqPrefix(config)).toBe('{prod}');
    expect(formatRedisNodes(config.redisClusterNodes!)).toBe('10.0.0.1:7000,redis-2.internal:7001,[::1]:7002');
  });

  it('refuses REDIS_URL and REDIS_CLUSTER_NODES together', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://localhost:6379', REDIS_CLUSTER_NODES: '10.0.0.1:7000' })).toThrow(
      /REDIS_URL and REDIS_CLUSTER_NODES are both set/,
    );
  });

  it.each(['10.0.0.1', '10.0.0.1:', ':7000', '10.0.0.1:70000', 'redis://10.0.0.1:7000', '10.0.0.1:7000,,10.0.0.2:7000', 'a b:1'])(
    'names a malformed node: %j',
    (value) => {
      let error: unknown;
      try {
        loadConfig({ REDIS_CLUSTER_NODES: value });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toMatch(/REDIS_CLUSTER_NODES: ".*" is not a host:port seed node/);
    },
  );

  it('parses without a config', () => {
    expect(parseRedisNodes('X', '127.0.0.1:1').nodes).toEqual([{ host: '127.0.0.1', port: 1 }]);
    expect(parseRedisNodes('X', '127.0.0.1:0').problems).toHaveLength(1);
  });
});
