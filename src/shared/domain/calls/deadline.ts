/**
 * The deadline rule: every agent job carries `deadline` (epoch ms), when the agent stops waiting. A
 * worker must be able to finish its writes and decide before it, or the caller would be told "timeout"
 * about an operation that did happen; so work that cannot finish this far ahead of it is not started,
 * and a decision after it is 'abandoned' (decisions.ts). Real-time operations, agent batches and a
 * rollback waiting for an import batch all keep the margin.
 */
export const DEADLINE_MARGIN_MS = 250;

/** Whether work that takes `ms` more can still answer before `deadline` (epoch ms). */
export function beforeDeadline(deadline: number, ms = 0): boolean {
  return Date.now() + ms + DEADLINE_MARGIN_MS <= deadline;
}
