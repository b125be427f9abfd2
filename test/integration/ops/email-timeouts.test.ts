import { createServer, type Server, type Socket } from 'node:net';
import { emailChannel } from '../../../src/workers/alerts/email';
import type { AlertJob } from '../../../src/shared/domain/queues/payloads';

/**
 * An SMTP server that accepts connections and never greets (a mail relay hung or black-holing): an
 * e-mail delivery gives up within ALERT_HTTP_TIMEOUT_MS, as webhooks do, instead of nodemailer's
 * defaults (2 min to connect, 30 s for the greeting, 10 min idle), which held an alerts worker slot
 * each and kept END_CALL webhooks waiting behind them.
 */
describe('e-mail alerts to an SMTP server that never answers', () => {
  let server: Server;
  const sockets: Socket[] = [];
  let port = 0;

  beforeAll(async () => {
    server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const alert: AlertJob = {
    kind: 'LOW_BALANCE',
    account_tag: 'acc',
    transaction_tag: null,
    message: 'low',
    email: 'ops@example.com',
    mobile: null,
    details: {},
    at: new Date().toISOString(),
  };

  it('gives up after the alert timeout, with a retryable error', async () => {
    const channel = emailChannel(`smtp://127.0.0.1:${port}`, 'rating@example.com', 500);
    const outcome = await channel.deliver(alert, 'd-1').then(
      () => 'delivered',
      (err: Error) => err.message,
    );
    expect(outcome).toMatch(/greeting never received|timeout/i);
  }, 10_000);

  it('keeps a timeout the SMTP URL sets itself', async () => {
    const channel = emailChannel(`smtp://127.0.0.1:${port}?greetingTimeout=300`, 'rating@example.com', 60_000);
    await expect(channel.deliver(alert, 'd-2')).rejects.toThrow(/greeting never received/i);
  }, 10_000);
});
