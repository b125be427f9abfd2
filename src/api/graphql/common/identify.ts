import { randomUUID } from 'node:crypto';
import { badInput } from '../../../shared/infra/errors';
import type { TaggedKey } from '../../store/tagged-store';
import { optionalArg, readPatch, type Args, type FieldRules } from './input';
import { lookup, uuid, type Parse } from './validate';

/**
 * Lookup values are checked only for being well-formed (shared `lookup` rule): otherwise a value
 * that breaks a field's rules simply names nothing, and records stored before the rules stay reachable.
 */
export const lookupString: Parse<string> = lookup;

/** The id of a new record: the one given (a UUID), else a fresh uuid4. */
export function newId(args: Args): string {
  return optionalArg(args, 'id', uuid) ?? randomUUID();
}

/** `X(id, tag)` and `deleteX(id, tag)`: id, tag or both name the record. */
export function readTaggedKey(args: Args, tagField: string): TaggedKey {
  const id = optionalArg(args, 'id', lookupString);
  const tag = optionalArg(args, tagField, lookupString);
  if (id === undefined && tag === undefined) throw badInput('id', `give id or ${tagField}`);
  return { id, tag };
}

/**
 * `updateX(id, tag, ...)`: with an id, the tag argument is a new value (a rename); without one, the
 * tag names the record and is not a change.
 */
export function readTaggedUpdate<Doc>(args: Args, tagField: string, rules: FieldRules<Doc>): { key: TaggedKey; patch: Partial<Doc> } {
  const id = optionalArg(args, 'id', lookupString);
  if (id !== undefined) return { key: { id }, patch: readPatch(rules, args) };
  const tag = optionalArg(args, tagField, lookupString);
  if (tag === undefined) throw badInput('id', `give id or ${tagField} to name the record to update`);
  return { key: { tag }, patch: readPatch(rules, args, [tagField]) };
}
