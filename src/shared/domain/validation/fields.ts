import { badInput } from '../../infra/errors';
import { uriUserPart } from '../numbers/uri';
import { address, number, tag, tagList, TextLimits, type Parse } from './text';
import { EPOCH_MAX_SECONDS, EPOCH_MIN_SECONDS, MAX_TIMESTAMP_LENGTH, timestamp } from './timestamp';

/**
 * The kinds of field the agent's operations take, each with its one rule (src/shared/domain/validation, the
 * same as the API's) and how the rule is described to clients: a JSON schema for the OpenAPI document
 * and a GraphQL argument type. Validation, the GraphQL arguments and the OpenAPI document all read
 * the operations' field tables (./operations.ts), so they cannot drift apart.
 */

export type Input = Record<string, unknown>;

export type JsonSchema = Record<string, unknown>;

/**
 * `required`: absent is BAD_USER_INPUT. `optional`: absent is null. `now`: absent is the time of the
 * request. Absent is undefined or null, and for a field that is not required also '' (SIP proxies
 * send an unset variable as an empty string).
 */
export type Presence = 'required' | 'optional' | 'now';

interface KindValues {
  tag: string;
  account: string;
  number: string;
  address: string;
  tags: string[];
  timestamp: Date;
}

export type FieldKind = keyof KindValues;

export type FieldSpec =
  | { kind: Exclude<FieldKind, 'timestamp'>; presence: Exclude<Presence, 'now'>; description: string }
  | { kind: 'timestamp'; presence: Presence; description: string };

export type FieldTable = Readonly<Record<string, FieldSpec>>;

export type Values<T extends FieldTable> = {
  -readonly [N in keyof T]: T[N]['presence'] extends 'optional' ? KindValues[T[N]['kind']] | null : KindValues[T[N]['kind']];
};

/**
 * An account named by a SIP or TEL URI (`sip:alice@pbx`, `<sip:1001@pbx>`, as a proxy's `$fu` gives
 * it) is the URI's user part, so jobs and answers carry the plain tag. A URI without a user part names
 * no account: the value is taken as sent, like any other tag.
 */
const account: Parse<string> = (field, value) => {
  const raw = tag(field, value);
  const user = uriUserPart(raw);
  return user ? tag(field, user) : raw;
};

interface Kind<V> {
  parse: Parse<V>;
  /** The values accepted; `nullable` adds null (and, for text, the empty string) as "absent". */
  schema: (nullable: boolean) => JsonSchema;
  /** What the kind accepts, appended to every field's description. */
  accepts: string;
  graphql: string;
}

const text =
  (minLength: number, maxLength: number) =>
  (nullable: boolean): JsonSchema =>
    nullable ? { type: ['string', 'null'], maxLength } : { type: 'string', minLength, maxLength };

// As src/shared/domain/validation/text.ts measures an address: a host, brackets and a port.
const ADDRESS_MAX = TextLimits.HOST + 8;

export const kinds: { [K in FieldKind]: Kind<KindValues[K]> } = {
  tag: {
    parse: tag,
    schema: text(1, TextLimits.TAG),
    accepts: `A tag: 1 to ${TextLimits.TAG} characters, no control characters, no leading or trailing whitespace.`,
    graphql: 'String',
  },
  account: {
    parse: account,
    schema: text(1, TextLimits.TAG),
    accepts: `An account tag (1 to ${TextLimits.TAG} characters), or a SIP/TEL URI whose user part is the account tag (sip:alice@pbx, <sip:1001@pbx>).`,
    graphql: 'String',
  },
  number: {
    parse: number,
    schema: text(1, TextLimits.NUMBER),
    accepts: `A number (+39 06 1234) or a SIP/TEL URI (sip:+39061234@host;user=phone, "Alice" <sip:1001@pbx>): 1 to ${TextLimits.NUMBER} characters.`,
    graphql: 'String',
  },
  address: {
    parse: address,
    schema: text(1, ADDRESS_MAX),
    accepts: 'A hostname or IP address, optionally with a port (10.0.0.1:5060, [2001:db8::1]:5060).',
    graphql: 'String',
  },
  tags: {
    parse: tagList,
    schema: (nullable) => ({
      type: nullable ? ['array', 'null'] : 'array',
      maxItems: TextLimits.TAG_LIST,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: TextLimits.TAG },
    }),
    accepts: `At most ${TextLimits.TAG_LIST} tags, each 1 to ${TextLimits.TAG} characters, no repeats.`,
    graphql: '[String!]',
  },
  timestamp: {
    parse: timestamp,
    schema: (nullable) => ({
      oneOf: [
        {
          type: 'string',
          maxLength: MAX_TIMESTAMP_LENGTH,
          description: 'YYYY-MM-DDTHH:MM:SS[.fff][Z] (UTC), or epoch seconds in decimal (1763912345.123456)',
        },
        { type: 'number', minimum: EPOCH_MIN_SECONDS, exclusiveMaximum: EPOCH_MAX_SECONDS + 1, description: 'epoch seconds' },
        ...(nullable ? [{ type: 'null' }] : []),
      ],
    }),
    accepts:
      'UTC, years 2000 to 2100: a datetime YYYY-MM-DDTHH:MM:SS (optional fraction of up to 3 digits, optional Z), or epoch seconds with up to 6 decimals' +
      ` between ${EPOCH_MIN_SECONDS} and ${EPOCH_MAX_SECONDS}, as a JSON number or a decimal string. GraphQL takes it as a String.`,
    graphql: 'String',
  },
};

/** Reads a table's fields from client input, in the table's order; throws BAD_USER_INPUT naming the first bad field. */
export function readFields<T extends FieldTable>(table: T, input: Input, now: Date): Values<T> {
  const values: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(table)) {
    const value = input[name];
    if (value === undefined || value === null || (value === '' && spec.presence !== 'required')) {
      if (spec.presence === 'required') throw badInput(name, 'is required');
      values[name] = spec.presence === 'now' ? now : null;
    } else {
      values[name] = (kinds[spec.kind].parse as Parse<unknown>)(name, value);
    }
  }
  return values as Values<T>;
}
