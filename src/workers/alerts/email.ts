import nodemailer from 'nodemailer';
import type { AlertJob } from '../../shared/domain/queues/payloads';
import { alertTitle, Channel, PermanentDeliveryError } from './channel';

export function alertText(alert: AlertJob): string {
  const lines = [alert.message, '', `Alert: ${alert.kind}`, `Account: ${alert.account_tag}`];
  if (alert.transaction_tag) lines.push(`Transaction: ${alert.transaction_tag}`);
  for (const [key, value] of Object.entries(alert.details)) {
    if (value !== null) lines.push(`${key}: ${String(value)}`);
  }
  lines.push(`At: ${alert.at}`);
  return lines.join('\n');
}

/** nodemailer's waits, each bounded by the alert timeout unless the SMTP URL sets it. */
const SMTP_TIMEOUTS = ['connectionTimeout', 'greetingTimeout', 'socketTimeout'] as const;

/**
 * E-mail over SMTP (SMTP_URL, e.g. smtp://user:pass@mail:587 or smtps://...:465). Options such as
 * `?pool=true` or `?tls.rejectUnauthorized=false` are read from the URL by nodemailer. Its waits are
 * bounded by `timeoutMs` (ALERT_HTTP_TIMEOUT_MS, as webhooks are): with nodemailer's defaults (2 min to
 * connect, 30 s for the greeting, 10 min idle) a hung relay held an alerts worker slot per e-mail, and
 * END_CALL webhooks waited behind them.
 */
export function emailChannel(smtpUrl: string, from: string, timeoutMs: number): Channel {
  const url = new URL(smtpUrl);
  for (const key of SMTP_TIMEOUTS) if (!url.searchParams.has(key)) url.searchParams.set(key, String(timeoutMs));
  const transport = nodemailer.createTransport(url.toString());
  return {
    name: 'email',
    recipient: (alert) => alert.email,
    async deliver(alert, deliveryId) {
      try {
        await transport.sendMail({
          from,
          to: alert.email ?? undefined,
          subject: alertTitle(alert),
          text: alertText(alert),
          headers: { 'X-Rating-Alert': alert.kind, 'X-Rating-Delivery': deliveryId },
        });
      } catch (err) {
        // 5xx SMTP replies (unknown mailbox, rejected sender) are final; network trouble is not.
        const code = (err as { responseCode?: number }).responseCode;
        if (code !== undefined && code >= 500) throw new PermanentDeliveryError(`SMTP ${code}: ${(err as Error).message}`);
        throw err;
      }
    },
  };
}
