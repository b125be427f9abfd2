import { PermanentDeliveryError } from './channel';

/**
 * POSTs a JSON body and resolves on a 2xx answer. Credentials written in the URL
 * (https://user:pass@host/...) are sent as Basic authentication, which fetch would refuse.
 */
export async function postJson(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<void> {
  const target = new URL(url);
  const auth: Record<string, string> = {};
  if (target.username || target.password) {
    const user = decodeURIComponent(target.username);
    const pass = decodeURIComponent(target.password);
    auth.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    target.username = '';
    target.password = '';
  }
  const response = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth, ...headers },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  // Drain the body so the connection can be reused.
  await response.arrayBuffer().catch(() => undefined);
  if (response.ok) return;
  const message = `${target.origin}${target.pathname} answered HTTP ${response.status}`;
  // 4xx means the request itself is wrong and will be refused again; 408 and 429 are worth a retry.
  if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429) {
    throw new PermanentDeliveryError(message);
  }
  throw new Error(message);
}
