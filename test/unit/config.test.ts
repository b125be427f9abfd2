import { ConfigError, loadConfig, sharedProcessProblem } from '../../src/shared/infra/config';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      apiPort: 4000,
      agentPort: 4001,
      dataDir: './.data',
      nodeEnv: 'development',
      mongoUrl: undefined,
      redisUrl: undefined,
      mongoDb: 'rating',
      logLevel: 'info',
    });
  });

  it('reads ports, data dir and the database name from the URL', () => {
    const config = loadConfig({ API_PORT: '5000', AGENT_PORT: '5001', DATA_DIR: '/tmp/x', MONGO_URL: 'mongodb://h:1/billing' });
    expect(config).toMatchObject({ apiPort: 5000, agentPort: 5001, dataDir: '/tmp/x', mongoDb: 'billing' });
  });

  // A replica set is listed as several host:port pairs, which WHATWG URL parsing refuses (docs/SCALING.md).
  it.each([
    ['mongodb://m1:27017,m2:27017,m3:27017/billing?replicaSet=rs0', 'billing'],
    ['mongodb://user:p%40ss@m1:27017,m2:27018/calls%2Dx?authSource=admin', 'calls-x'],
    ['mongodb+srv://cluster0.example.net/rating2', 'rating2'],
    ['mongodb://m1,m2,m3/?replicaSet=rs0', 'rating'],
  ])('takes the replica set URL %s, database %s', (url, db) => {
    expect(loadConfig({ MONGO_URL: url })).toMatchObject({ mongoUrl: url, mongoDb: db });
  });

  it.each([
    [{ API_PORT: 'abc' }, 'API_PORT="abc" must be an integer from 0 to 65535'],
    [{ AGENT_PORT: '70000' }, 'AGENT_PORT="70000" must be an integer from 0 to 65535'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud" must be one of'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV="staging" must be one of'],
    [{ MONGO_URL: 'http://x' }, 'MONGO_URL must use mongodb:'],
    [{ MONGO_URL: 'mongodb://' }, 'MONGO_URL is not a valid MongoDB connection string'],
    [{ MONGO_URL: 'mongodb://m1:notaport/x' }, 'MONGO_URL is not a valid MongoDB connection string'],
    [{ REDIS_URL: 'redis://' }, 'REDIS_URL names no host'],
    [{ REDIS_URL: 'redis:foo' }, 'REDIS_URL names no host'],
    [{ SMTP_URL: 'smtp://' }, 'SMTP_URL names no host'],
    [{ ALERT_WEBHOOK_URL: 'https://hooks.example', ALERT_WEBHOOK_SECRET: 'short' }, 'ALERT_WEBHOOK_SECRET must be at least 16 characters'],
    [{ REDIS_URL: 'not a url' }, 'REDIS_URL is not a valid URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL must use redis: or rediss: or unix:'],
    [{ REDIS_URL: 'unix:relative.sock' }, "REDIS_URL unix: needs the socket's absolute path"],
    [{ WORKER_CONCURRENCY: '0' }, 'WORKER_CONCURRENCY="0" must be an integer from 1 to 1000'],
    [{ PROCESSING_WINDOW_MS: '5000' }, 'PROCESSING_WINDOW_MS="5000" must be an integer from 0 to 1000'],
    [{ PROCESSING_CONCURRENCY: '0' }, 'PROCESSING_CONCURRENCY="0" must be an integer from 1 to 1000'],
    [{ MONGO_WRITE_CONCERN: '0' }, 'MONGO_WRITE_CONCERN="0" must be "majority" or a number of members from 1 to 50'],
    [{ MONGO_WRITE_CONCERN: 'all' }, 'MONGO_WRITE_CONCERN="all" must be "majority"'],
    [{ MONGO_JOURNAL: 'yes' }, 'MONGO_JOURNAL="yes" must be one of true, false'],
  ])('refuses %j with a clear message', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("sends processing at once unless a window is set (docs/DESIGN.md section 4), at the workers' concurrency", () => {
    expect(loadConfig({ WORKER_CONCURRENCY: '8' })).toMatchObject({ processingWindowMs: 0, processingConcurrency: 8 });
    expect(loadConfig({ PROCESSING_WINDOW_MS: '50', PROCESSING_CONCURRENCY: '64' })).toMatchObject({
      processingWindowMs: 50,
      processingConcurrency: 64,
    });
  });

  it('writes with majority and journal unless told otherwise (docs/SCALING.md)', () => {
    expect(loadConfig({})).toMatchObject({ mongoWriteConcern: 'majority', mongoJournal: true });
    expect(loadConfig({ MONGO_WRITE_CONCERN: '1', MONGO_JOURNAL: 'false' })).toMatchObject({ mongoWriteConcern: 1, mongoJournal: false });
  });

  it('takes a Redis server on this machine by its socket', () => {
    expect(loadConfig({ REDIS_URL: 'unix:///run/redis/redis.sock' })).toMatchObject({ redisUrl: 'unix:///run/redis/redis.sock' });
  });

  it('reports every bad value at once', () => {
    try {
      loadConfig({ API_PORT: '-1', AGENT_PORT: 'x' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(2);
    }
  });

  // npm start runs the API and the agent in one process; separate processes (containers) may share a number.
  it('refuses one port for the API and the agent of one process, and only there', () => {
    expect(sharedProcessProblem(loadConfig({ API_PORT: '5000', AGENT_PORT: '5000' }))).toBe(
      'API_PORT and AGENT_PORT are both 5000: the management API and the agent each need a port of their own',
    );
    expect(sharedProcessProblem(loadConfig({ AGENT_PORT: '4000' }))).toMatch(/both 4000/);
    expect(sharedProcessProblem(loadConfig({}))).toBeNull();
    expect(sharedProcessProblem(loadConfig({ API_PORT: '0', AGENT_PORT: '0' }))).toBeNull();
  });
});
