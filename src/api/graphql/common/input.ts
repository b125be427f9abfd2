import { badInput } from '../../../shared/infra/errors';
import type { Parse } from './validate';

/** Arguments as GraphQL hands them over: an omitted argument is absent, an explicit null is null. */
export type Args = Record<string, unknown>;

export interface FieldRule<T> {
  parse: Parse<Exclude<T, null | undefined>>;
  /** Create refuses the record without it. */
  required?: boolean;
  /** Stored on create when the argument is omitted or null; without it, null is stored. */
  fallback?: () => T;
  /** Whether an explicit null on update clears the field (otherwise null is refused). */
  nullable?: boolean;
}

/** How each writable field of a stored document is read from arguments. */
export type FieldRules<Doc> = { [K in keyof Doc]?: FieldRule<Doc[K]> };

export function isGiven(args: Args, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(args, name) && args[name] !== undefined;
}

function ruleEntries<Doc>(rules: FieldRules<Doc>): Array<[keyof Doc & string, FieldRule<unknown>]> {
  return Object.entries(rules) as Array<[keyof Doc & string, FieldRule<unknown>]>;
}

/**
 * The fields of a new record: each validated, defaults applied to omitted ones. `path` prefixes
 * field names in errors when the record is nested in an argument (`destination_rate.rate`).
 */
export function readCreate<Doc>(rules: FieldRules<Doc>, args: Args, path = ''): Partial<Doc> {
  const doc: Record<string, unknown> = {};
  for (const [name, rule] of ruleEntries(rules)) {
    const value = args[name];
    if (value === undefined || value === null) {
      if (rule.required) throw badInput(`${path}${name}`, 'is required');
      doc[name] = rule.fallback ? rule.fallback() : null;
    } else {
      doc[name] = rule.parse(`${path}${name}`, value);
    }
  }
  return doc as Partial<Doc>;
}

/**
 * The changes of an update: omitted arguments leave fields unchanged, an explicit null clears a
 * nullable field. `skip` names arguments that identify the record instead of changing it.
 */
export function readPatch<Doc>(rules: FieldRules<Doc>, args: Args, skip: readonly string[] = []): Partial<Doc> {
  const patch: Record<string, unknown> = {};
  for (const [name, rule] of ruleEntries(rules)) {
    if (skip.includes(name) || !Object.prototype.hasOwnProperty.call(args, name)) continue;
    const value = args[name];
    if (value === undefined) continue;
    if (value === null) {
      if (!rule.nullable) throw badInput(name, 'cannot be null');
      patch[name] = null;
    } else {
      patch[name] = rule.parse(name, value);
    }
  }
  return patch as Partial<Doc>;
}

/** An optional argument that must not be null when given (identifiers, amounts). */
export function optionalArg<T>(args: Args, name: string, parse: Parse<T>): T | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  return parse(name, value);
}

export function requiredArg<T>(args: Args, name: string, parse: Parse<T>): T {
  const value = args[name];
  if (value === undefined || value === null) throw badInput(name, 'is required');
  return parse(name, value);
}
