import { Writable } from 'node:stream';
import pino from 'pino';
import { createHttpServer } from '../../../src/shared/infra/http/server';
import { metricsFor } from '../../../src/shared/domain/metrics';
import { createTestContext, TestContext } from '../../support/harness';

/**
 * Request log lines: the API logs each request at info, the agent (quietRequests, issue 12) does not;
 * both without Fastify's deprecation warning for the top-level disableRequestLogging option
 * (FSTDEP023, printed twice by every `npm start` until issue 32).
 */
describe('request logging', () => {
  let ctx: TestContext;
  // Fastify emits its deprecations with process.emitWarning (process-warning); watched, still emitted.
  let emitWarning: jest.SpyInstance;

  beforeAll(async () => {
    ctx = await createTestContext();
    emitWarning = jest.spyOn(process, 'emitWarning');
  });

  afterAll(async () => {
    emitWarning?.mockRestore();
    await ctx?.destroy();
  });

  /** Messages logged while a server built with `quietRequests` answers one request. */
  async function messagesOf(quietRequests: boolean): Promise<string[]> {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const logger = pino({ level: 'info' }, sink);
    const app = await createHttpServer(
      { ...ctx, logger },
      { name: quietRequests ? 'agent' : 'api', quietRequests, metrics: metricsFor(ctx) },
    );
    try {
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      expect((await fetch(`${url}/health`)).status).toBe(200);
    } finally {
      await app.close();
    }
    return lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
  }

  it('logs each request at info without quietRequests', async () => {
    expect(await messagesOf(false)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
  });

  it('logs no request line with quietRequests', async () => {
    expect(await messagesOf(true)).not.toEqual(expect.arrayContaining([expect.stringMatching(/^(incoming request|request completed)$/)]));
  });

  it('emits no deprecation warning either way', async () => {
    emitWarning.mockClear();
    await messagesOf(true);
    await messagesOf(false);
    expect(emitWarning.mock.calls.map((args) => args.map(String).join(' '))).toEqual([]);
  });
});
