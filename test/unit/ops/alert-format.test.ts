import { createHmac } from 'node:crypto';
import { recipientOf } from '../../../src/shared/domain/alerts/recipients';
import type { AlertJob } from '../../../src/shared/domain/queues/payloads';
import { alertText } from '../../../src/workers/alerts/email';
import { smsText } from '../../../src/workers/alerts/sms';
import { signBody, webhookBody } from '../../../src/workers/alerts/webhook';

const alert: AlertJob = {
  kind: 'END_CALL',
  account_tag: 'acme',
  transaction_tag: 't-1',
  message: 'End call t-1 of account acme: its cost has used up the available balance.',
  email: null,
  mobile: null,
  details: { available_balance: '-3', destination: null },
  at: '2026-11-21T10:00:00.000Z',
  delivered: ['sms'],
};

describe('alert formats', () => {
  it('signs the exact body with HMAC-SHA256', () => {
    const body = webhookBody(alert, 'alert/END_CALL/acme/t-1/exhausted/once');
    expect(signBody('s3cret', body)).toBe(`sha256=${createHmac('sha256', 's3cret').update(body).digest('hex')}`);
    expect(JSON.parse(body)).toEqual({
      id: 'alert/END_CALL/acme/t-1/exhausted/once',
      kind: 'END_CALL',
      account_tag: 'acme',
      transaction_tag: 't-1',
      message: alert.message,
      details: { available_balance: '-3', destination: null },
      at: '2026-11-21T10:00:00.000Z',
    }); // delivery bookkeeping stays internal
  });

  it('writes the e-mail text with the details that are set', () => {
    expect(alertText(alert)).toBe(
      [
        alert.message,
        '',
        'Alert: END_CALL',
        'Account: acme',
        'Transaction: t-1',
        'available_balance: -3',
        'At: 2026-11-21T10:00:00.000Z',
      ].join('\n'),
    );
  });

  it('keeps SMS short', () => {
    expect(smsText(alert)).toBe(alert.message);
    const long = smsText({ ...alert, message: 'x'.repeat(1000) });
    expect(long).toHaveLength(320);
    expect(long.endsWith('…')).toBe(true);
  });

  it('treats blank notification fields as no recipient', () => {
    expect(recipientOf({ account_tag: 'a', notification_email: ' a@b.c ', notification_mobile: '' })).toEqual({
      email: 'a@b.c',
      mobile: null,
    });
  });
});
