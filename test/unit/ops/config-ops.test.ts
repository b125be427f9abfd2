import { ConfigError, loadConfig } from '../../../src/shared/infra/config';

describe('operations configuration', () => {
  it('has documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      longCallScanSeconds: 60,
      bootstrapTokens: [],
      authCacheMs: 5000,
      rateLimitMax: 60000,
      rateLimitWindowMs: 60000,
      graphqlMaxDepth: 12,
      bodyLimitBytes: 1048576,
      smtpUrl: undefined,
      smsGatewayUrl: undefined,
      alertWebhookUrl: undefined,
      alertHttpTimeoutMs: 10000,
      alertRepeatSeconds: 3600,
      lowBalanceThreshold: 0n,
    });
  });

  it('reads the alert channels and the threshold', () => {
    const config = loadConfig({
      SMTP_URL: 'smtps://u:p@mail.example.com:465',
      SMS_GATEWAY_URL: 'https://sms.example.com/send',
      ALERT_WEBHOOK_URL: 'https://hooks.example.com/rating',
      ALERT_WEBHOOK_SECRET: 'hmac-key-of-the-receiver',
      LOW_BALANCE_THRESHOLD: '5000',
      RATING_TOKENS: 'ops:read+write:0123456789abcdef',
    });
    expect(config).toMatchObject({
      smtpUrl: 'smtps://u:p@mail.example.com:465',
      alertWebhookSecret: 'hmac-key-of-the-receiver',
      lowBalanceThreshold: 5000n,
    });
    expect(config.bootstrapTokens.map((t) => t.name)).toEqual(['ops']);
  });

  it.each([
    [{ ALERT_WEBHOOK_URL: 'https://hooks.example.com' }, 'ALERT_WEBHOOK_SECRET is required when ALERT_WEBHOOK_URL is set'],
    [{ SMTP_URL: 'http://mail' }, 'SMTP_URL must use smtp: or smtps:'],
    [{ LOW_BALANCE_THRESHOLD: '1.5' }, 'LOW_BALANCE_THRESHOLD="1.5" must be an integer'],
    [{ RATE_LIMIT_MAX: '-1' }, 'RATE_LIMIT_MAX="-1" must be an integer'],
    [{ GRAPHQL_MAX_DEPTH: '1' }, 'GRAPHQL_MAX_DEPTH="1" must be an integer from 2 to 100'],
    [{ RATING_TOKENS: 'ops:read:short' }, 'secret must be at least 16 characters'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
