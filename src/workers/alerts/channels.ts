import type { Config } from '../../shared/infra/config';
import type { Channel } from './channel';
import { emailChannel } from './email';
import { smsChannel } from './sms';
import { webhookChannel } from './webhook';

/** The channels this process can deliver on; an unconfigured channel is simply absent. */
export function channelsFromConfig(config: Config): Channel[] {
  const channels: Channel[] = [];
  if (config.smtpUrl) channels.push(emailChannel(config.smtpUrl, config.alertEmailFrom, config.alertHttpTimeoutMs));
  if (config.smsGatewayUrl) channels.push(smsChannel(config.smsGatewayUrl, config.alertHttpTimeoutMs));
  if (config.alertWebhookUrl && config.alertWebhookSecret) {
    channels.push(webhookChannel(config.alertWebhookUrl, config.alertWebhookSecret, config.alertHttpTimeoutMs));
  }
  return channels;
}
