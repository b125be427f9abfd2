/**
 * Call detail records as switches write them (docs/IMPORTS.md, "Switch formats"): a mapping of the
 * file's layout onto a call (mapping.ts), the named formats in that form (builtin.ts), the files'
 * dialects (dialects.ts), local times (local-time.ts, times.ts), rows to calls (rows.ts), INVITE/BYE
 * pairs (pairing.ts). src/shared/domain/imports/feed.ts sends the calls as a canonical import's.
 */
export { BUILTIN_FORMAT_NAMES, BUILTIN_FORMATS, builtinMapping, isBuiltinFormat, type BuiltinFormat } from './builtin';
export { MappingError, parseMapping, type Mapping } from './mapping';
export { UnknownZone, Zone } from './local-time';
export { CdrFormat } from './rows';
