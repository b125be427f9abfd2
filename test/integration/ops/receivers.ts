import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser, ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** Real local receivers for alert deliveries: an SMTP server and HTTP endpoints. */

export interface SmtpReceiver {
  url: string;
  messages: Array<{ envelopeTo: string[]; mail: ParsedMail }>;
  close(): Promise<void>;
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const messages: SmtpReceiver['messages'] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          messages.push({ envelopeTo: session.envelope.rcptTo.map((r) => r.address), mail });
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface HttpRequestSeen {
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
}

export interface HttpReceiver {
  url: string;
  requests: HttpRequestSeen[];
  /** Status to answer each request with; the default answers 200. Called with the request index. */
  respond: (index: number) => number;
  close(): Promise<void>;
}

export async function startHttpReceiver(): Promise<HttpReceiver> {
  const receiver = { requests: [] as HttpRequestSeen[], respond: (_index: number) => 200 } as HttpReceiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const index = receiver.requests.length;
      receiver.requests.push({ headers: req.headers, raw, body: JSON.parse(raw) as Record<string, unknown> });
      res.statusCode = receiver.respond(index);
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  receiver.url = `http://127.0.0.1:${port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

export async function waitFor<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 30000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
