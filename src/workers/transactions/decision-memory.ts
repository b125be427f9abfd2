import type { OutcomeDoc } from '../../shared/domain/calls/decisions';
import { BoundedMap } from '../../shared/infra/bounded-map';

/** What the worker needs of a decision: whether it stands, what it covers, what was answered. */
export type KnownDecision = Pick<OutcomeDoc, 'state' | 'made' | 'result'>;

/**
 * The decisions this worker process recorded or read lately (issue 36: an end need not read back the
 * decision its own process recorded for the call's begin a moment before). Safe to remember because a
 * decision never changes once recorded: the first insert under a job's id wins and is never updated
 * in what is kept here (state, what it covers, the answer), and one deleted by the recovery sweep's
 * pruning was settled before (src/shared/domain/calls/decisions.ts). Only what is in MongoDB is
 * remembered, after it is there; a process that does not remember a decision reads it as before.
 * Bounded: the oldest are forgotten first.
 */
export class DecisionMemory {
  private readonly known: BoundedMap<string, KnownDecision>;

  constructor(capacity = 100_000) {
    this.known = new BoundedMap(capacity);
  }

  get(jobId: string): KnownDecision | undefined {
    return this.known.get(jobId);
  }

  remember(jobId: string, decision: KnownDecision): void {
    if (this.known.has(jobId)) return;
    this.known.set(jobId, { state: decision.state, made: decision.made, result: decision.result });
  }
}
