import { createHmac } from 'node:crypto';
import type { AlertJob } from '../../shared/domain/queues/payloads';
import type { Channel } from './channel';
import { postJson } from './http-post';

export const SIGNATURE_HEADER = 'x-rating-signature';

/** `sha256=<hex HMAC-SHA256 of the exact body bytes>`; receivers recompute it over the raw body. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** The webhook body: the alert without delivery bookkeeping, plus the delivery id receivers dedupe on. */
export function webhookBody(alert: AlertJob, deliveryId: string): string {
  return JSON.stringify({
    id: deliveryId,
    kind: alert.kind,
    account_tag: alert.account_tag,
    transaction_tag: alert.transaction_tag,
    message: alert.message,
    details: alert.details,
    at: alert.at,
  });
}

/**
 * Every alert goes to the webhook (including END_CALL, the "end this call" push for switches).
 * A retry after a lost answer may deliver twice: receivers dedupe on `id` / X-Rating-Delivery.
 */
export function webhookChannel(url: string, secret: string, timeoutMs: number): Channel {
  return {
    name: 'webhook',
    recipient: () => url,
    deliver(alert, deliveryId) {
      const body = webhookBody(alert, deliveryId);
      return postJson(
        url,
        body,
        { [SIGNATURE_HEADER]: signBody(secret, body), 'x-rating-event': alert.kind, 'x-rating-delivery': deliveryId },
        timeoutMs,
      );
    },
  };
}
