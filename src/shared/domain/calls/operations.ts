import type { AuthorizationJob, BeginJob, EndJob, RecordJob, RollbackJob } from './jobs';
import { readFields, type FieldTable, type Input } from '../validation/fields';

/**
 * What each agent operation takes, as data: validation (below), the agent's GraphQL arguments
 * (src/agent/graphql/transactions.ts) and OpenAPI document (src/agent/rest/openapi.ts), and the lines of
 * file imports (src/shared/domain/imports) are all read from these tables, so every surface applies one rule.
 * Descriptions are the clients' documentation of the field.
 */

const transactionTag = {
  kind: 'tag',
  presence: 'required',
  description: "The call's identifier (a SIP Call-ID), unique per calling account.",
} as const;
const accountTag = { kind: 'account', presence: 'required', description: 'The calling account, which pays for the call.' } as const;

const callFields = {
  transaction_tag: transactionTag,
  account_tag: accountTag,
  source: { kind: 'number', presence: 'required', description: 'The calling number, as the switch sent it (kept on the record).' },
  destination: {
    kind: 'number',
    presence: 'required',
    description: 'The called number; rating matches prefixes on its user part without "+" and separators.',
  },
  source_ip: { kind: 'address', presence: 'optional', description: 'Where the call came from.' },
  carrier_ip: {
    kind: 'address',
    presence: 'optional',
    description:
      "The carrier the switch chose: billed at that carrier's rate when it is among the candidates, else at the least-cost carrier's.",
  },
  tags: { kind: 'tags', presence: 'optional', description: 'Labels kept on the record.' },
  destination_account_tag: {
    kind: 'account',
    presence: 'optional',
    description: 'The receiving account of an on-net call: its running entry counts against its concurrency limit.',
  },
  timestamp_auth: { kind: 'timestamp', presence: 'optional', description: 'When the call was authorized.' },
} as const;

export const operationFields = {
  authorization: {
    transaction_tag: {
      kind: 'tag',
      presence: 'optional',
      description: 'With it, a concurrency slot is reserved on every party until beginTransaction takes it or the setup time runs out.',
    },
    account_tag: accountTag,
    destination_account_tag: callFields.destination_account_tag,
    source: { kind: 'number', presence: 'optional', description: 'The calling number.' },
    destination: callFields.destination,
  },
  begin: {
    ...callFields,
    timestamp_begin: { kind: 'timestamp', presence: 'now', description: 'When the call started; the time of the request when absent.' },
  },
  end: {
    transaction_tag: transactionTag,
    account_tag: accountTag,
    timestamp_end: { kind: 'timestamp', presence: 'now', description: 'When the call ended; the time of the request when absent.' },
  },
  // The times first: of a CDR's problems, a missing or bad time is the one reported (as it always was).
  record: {
    timestamp_begin: { kind: 'timestamp', presence: 'required', description: 'When the call started.' },
    timestamp_end: { kind: 'timestamp', presence: 'required', description: 'When the call ended.' },
    ...callFields,
  },
  rollback: {
    transaction_tag: transactionTag,
    account_tag: accountTag,
  },
} as const satisfies Record<string, FieldTable>;

export type OperationKey = keyof typeof operationFields;

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** Pure validation: turns client input into job payloads, or throws BAD_USER_INPUT naming the field. */
export const validate = {
  begin(input: Input, now: Date, deadline: number): BeginJob {
    const v = readFields(operationFields.begin, input, now);
    return { op: 'begin', ...v, timestamp_auth: iso(v.timestamp_auth), timestamp_begin: v.timestamp_begin.toISOString(), deadline };
  },
  end(input: Input, now: Date, deadline: number): EndJob {
    const v = readFields(operationFields.end, input, now);
    return { op: 'end', ...v, timestamp_end: v.timestamp_end.toISOString(), deadline };
  },
  record(input: Input, now: Date, deadline: number): RecordJob {
    const v = readFields(operationFields.record, input, now);
    return {
      op: 'record',
      ...v,
      timestamp_auth: iso(v.timestamp_auth),
      timestamp_begin: v.timestamp_begin.toISOString(),
      timestamp_end: v.timestamp_end.toISOString(),
      deadline,
    };
  },
  rollback(input: Input, now: Date, deadline: number): RollbackJob {
    return { op: 'rollback', ...readFields(operationFields.rollback, input, now), deadline };
  },
  authorization(input: Input, now: Date, deadline: number): AuthorizationJob {
    return { op: 'authorization', ...readFields(operationFields.authorization, input, now), deadline };
  },
} satisfies { [K in OperationKey]: (input: Input, now: Date, deadline: number) => unknown };

export type OperationName = Exclude<OperationKey, 'authorization'>;
