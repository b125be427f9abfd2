import http from 'node:http';

/**
 * The load generator's HTTP client: node:http with a keep-alive pool (as a SIP proxy's HTTP module
 * keeps its connections), lighter on the shared CPU than fetch. Never throws: every outcome is an
 * answer or an error kind.
 */
export interface Answer {
  /** Milliseconds from the request's start to its whole answer. */
  ms: number;
  /** The parsed JSON body of a 200, else undefined. */
  body?: Record<string, unknown>;
  /** Why there is no usable answer: `HTTP 429 RATE_LIMITED`, `network ECONNRESET`, `client timeout`. */
  error?: string;
}

export class AgentClient {
  private readonly pool: http.Agent;

  constructor(
    private readonly host: string,
    private readonly port: number,
    sockets = 1024,
    private readonly timeoutMs = 30_000,
  ) {
    this.pool = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  }

  post(path: string, payload: unknown): Promise<Answer> {
    return this.send('POST', path, JSON.stringify(payload));
  }

  /** A GET with no body (the HTTP-only floor: `/health` on the agent). */
  get(path: string): Promise<Answer> {
    return this.send('GET', path);
  }

  private send(method: 'GET' | 'POST', path: string, body?: string): Promise<Answer> {
    const started = performance.now();
    return new Promise<Answer>((resolve) => {
      let done = false;
      const finish = (answer: Omit<Answer, 'ms'>) => {
        if (done) return;
        done = true;
        resolve({ ms: performance.now() - started, ...answer });
      };
      const req = http.request(
        {
          host: this.host,
          port: this.port,
          path,
          method,
          agent: this.pool,
          headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (err: NodeJS.ErrnoException) => finish({ error: `network ${err.code ?? err.message}` }));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            let parsed: Record<string, unknown> | undefined;
            try {
              parsed = JSON.parse(text) as Record<string, unknown>;
            } catch {
              parsed = undefined;
            }
            if (res.statusCode !== 200) {
              const e = parsed as { error?: { code?: string }; errors?: { extensions?: { code?: string } }[] } | undefined;
              const code = e?.error?.code ?? e?.errors?.[0]?.extensions?.code ?? '';
              finish({ error: `HTTP ${res.statusCode}${code ? ` ${code}` : ''}` });
            } else if (!parsed) finish({ error: 'unreadable answer' });
            else finish({ body: parsed });
          });
        },
      );
      req.setTimeout(this.timeoutMs, () => {
        finish({ error: 'client timeout' });
        req.destroy();
      });
      req.on('error', (err: NodeJS.ErrnoException) => finish({ error: `network ${err.code ?? err.message}` }));
      req.end(body);
    });
  }

  close(): void {
    this.pool.destroy();
  }
}
