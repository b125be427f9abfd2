import type { AppContext } from '../../shared/domain/context';
import { announceChange, type ChangeTopic } from '../../shared/infra/announced-version';

/**
 * Tells every process holding a topic's data in memory (workers, agents, this API's own cache) that it
 * changed (src/shared/infra/announced-version.ts). Called after each committed write to it.
 */
export class ChangeAnnouncer {
  constructor(
    private readonly ctx: Pick<AppContext, 'redis' | 'config' | 'logger'>,
    private readonly topic: ChangeTopic,
    /** This process's own copy, if it holds one. */
    private readonly local: { invalidate(): void } = { invalidate: () => undefined },
  ) {}

  async announce(): Promise<void> {
    this.local.invalidate();
    try {
      await announceChange(this.ctx, this.topic);
    } catch (err) {
      // The write is committed and cannot be taken back; failing the request would invite a retry
      // of something that already happened. Redis being down stops the queues too, so this is loud.
      this.ctx.logger.error({ err, topic: this.topic }, 'data changed but the change could not be announced over Redis');
    }
  }
}
