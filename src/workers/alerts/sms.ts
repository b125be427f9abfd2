import type { AlertJob } from '../../shared/domain/queues/payloads';
import type { Channel } from './channel';
import { postJson } from './http-post';

/** SMS bodies stay short: a gateway splits or refuses long ones, and a phone shows little. */
const SMS_MAX_CHARS = 320;

export function smsText(alert: AlertJob): string {
  return alert.message.length <= SMS_MAX_CHARS ? alert.message : `${alert.message.slice(0, SMS_MAX_CHARS - 1)}…`;
}

/** SMS through an HTTP gateway: POST SMS_GATEWAY_URL with JSON `{to, message}`; any 2xx is success. */
export function smsChannel(gatewayUrl: string, timeoutMs: number): Channel {
  return {
    name: 'sms',
    recipient: (alert) => alert.mobile,
    deliver: (alert, deliveryId) =>
      postJson(gatewayUrl, JSON.stringify({ to: alert.mobile, message: smsText(alert) }), { 'x-rating-delivery': deliveryId }, timeoutMs),
  };
}
