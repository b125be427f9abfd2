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

/**
 * E-mail over SMTP (SMTP_URL, e.g. smtp://user:pass@mail:587 or smtps://...:465). Options such as
 * `?pool=true` or `?tls.rejectUnauthorized=false` are read from the URL by nodemailer.
 */
export function emailChannel(smtpUrl: string, from: string): Channel {
  const transport = nodemailer.createTransport(smtpUrl);
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
