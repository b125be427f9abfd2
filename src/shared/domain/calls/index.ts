/**
 * The call contract: what the agent and the workers agree on, in one place (docs/ARCHITECTURE.md).
 * - jobs.ts: the agent operations as `transactions` jobs, with their deadline;
 * - operations.ts: each operation's fields, as data (validation, GraphQL arguments, OpenAPI, imports);
 * - results.ts: the answers, typed by Reason, and one constructor for each answer shape;
 * - reasons.ts: every refusal and engine failure, ordered and commented;
 * - decisions.ts: the decision ('done' or 'abandoned') that makes every answer true;
 * - deadline.ts: the deadline rule.
 * The agent, the workers, alerts and imports import these from here; nothing else spells a reason.
 */
export * from './deadline';
export * from './decisions';
export type * from './jobs';
export * from './reasons';
export * from './results';
