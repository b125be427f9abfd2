import { Job, UnrecoverableError } from 'bullmq';
import type { AppContext } from '../../shared/domain/context';
import { recordAlertDelivery } from '../../shared/domain/metrics';
import type { AlertChannel, AlertJob } from '../../shared/domain/queues/payloads';
import { Channel, PermanentDeliveryError } from './channel';
import { channelsFromConfig } from './channels';

export interface AlertResult {
  delivered: AlertChannel[];
  skipped: AlertChannel[];
}

/**
 * Delivers one alert on each configured channel that has a recipient. Channels are independent: a
 * failing one does not stop the others, each success is written back into the job data before the
 * next channel, and the job fails (BullMQ retries it with backoff) if any channel failed, so a
 * retry resends only what did not get through. When every failure is permanent the job fails
 * without retries.
 */
export function alertProcessor(ctx: AppContext, channels: Channel[] = channelsFromConfig(ctx.config)) {
  if (channels.length === 0)
    ctx.logger.warn('no alert channel configured (SMTP_URL, SMS_GATEWAY_URL, ALERT_WEBHOOK_URL): alerts are only logged');
  return async (job: Job<AlertJob>): Promise<AlertResult> => {
    const deliveryId = job.id ?? `${job.name}-${job.timestamp}`;
    const delivered = [...(job.data.delivered ?? [])];
    const skipped: AlertChannel[] = [];
    const failures: Array<{ channel: AlertChannel; err: Error }> = [];
    const log = { jobId: job.id, kind: job.data.kind, account_tag: job.data.account_tag, attempt: job.attemptsMade + 1 };

    for (const channel of channels) {
      if (delivered.includes(channel.name)) continue;
      if (channel.recipient(job.data) === null) {
        skipped.push(channel.name);
        continue;
      }
      try {
        await channel.deliver(job.data, deliveryId);
        delivered.push(channel.name);
        recordAlertDelivery(ctx, channel.name, 'delivered');
        await job.updateData({ ...job.data, delivered });
        ctx.logger.info({ ...log, channel: channel.name }, 'alert delivered');
      } catch (err) {
        recordAlertDelivery(ctx, channel.name, 'failed');
        failures.push({ channel: channel.name, err: err as Error });
        ctx.logger.warn({ ...log, channel: channel.name, err }, 'alert delivery failed');
      }
    }

    if (failures.length > 0) {
      const message = failures.map((f) => `${f.channel}: ${f.err.message}`).join('; ');
      if (failures.every((f) => f.err instanceof PermanentDeliveryError)) throw new UnrecoverableError(message);
      throw new Error(message);
    }
    if (channels.length === 0) ctx.logger.info({ ...log, message: job.data.message }, 'alert (no channel configured)');
    return { delivered, skipped };
  };
}
