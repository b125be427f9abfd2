import type { AlertChannel, AlertJob } from '../../shared/domain/queues/payloads';

/** One way of delivering alerts. Only configured channels exist; see channelsFromConfig. */
export interface Channel {
  name: AlertChannel;
  /** Whom this alert goes to on this channel; null skips the channel for this alert. */
  recipient(alert: AlertJob): string | null;
  /** Resolves once the receiver accepted the alert; throws otherwise (DeliveryError when retrying cannot help). */
  deliver(alert: AlertJob, deliveryId: string): Promise<void>;
}

/** A failure that a retry would repeat (a refused recipient, a 4xx answer): not worth retrying. */
export class PermanentDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentDeliveryError';
  }
}

/** Subject/title line shared by e-mail and SMS. */
export function alertTitle(alert: AlertJob): string {
  return `[call rating] ${alert.kind} - account ${alert.account_tag}`;
}
