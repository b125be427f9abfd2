import type { AppContext } from '../../shared/domain/context';
import { announceChange, type ChangeTopic } from '../../shared/infra/announced-version';
import { withTimeout } from '../../shared/infra/time-limit';

/**
 * How long a write's request waits for its announcement. ioredis holds a command while it reconnects,
 * so with Redis away the announcement would hold the request (and a deleted account's ledger close
 * after it) for as long as Redis stays away. Past this the request goes on; the held announcement is
 * sent when Redis is back, and holders re-read the version after their quiet period anyway.
 */
const ANNOUNCE_WAIT_MS = 2000;

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
    const sent = announceChange(this.ctx, this.topic);
    try {
      if ((await withTimeout(sent, ANNOUNCE_WAIT_MS)) === 'timeout') {
        sent.catch((err: unknown) => this.failed(err));
        this.ctx.logger.error({ topic: this.topic }, 'data changed but Redis is unreachable: the change is announced when it is back');
      }
    } catch (err) {
      this.failed(err);
    }
  }

  // The write is committed and cannot be taken back; failing the request would invite a retry of
  // something that already happened. Redis being down stops the queues too, so this is loud.
  private failed(err: unknown): void {
    this.ctx.logger.error({ err, topic: this.topic }, 'data changed but the change could not be announced over Redis');
  }
}
