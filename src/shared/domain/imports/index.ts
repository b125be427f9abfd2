/**
 * CDR imports, shared by their front ends: the CLI (`rating import FILE`, src/cli/import) and uploads
 * through the management API (`POST /v1/imports`, src/api/rest/imports.ts). docs/IMPORTS.md.
 */
export {
  BUILTIN_FORMAT_NAMES,
  builtinMapping,
  CdrFormat,
  isBuiltinFormat,
  MappingError,
  parseMapping,
  UnknownZone,
  type BuiltinFormat,
  type Mapping,
} from './cdr';
export { ContentId } from './content-id';
export { feedRecords, type FeedOptions } from './feed';
export { csvLine, headerProblems, jsonLine, splitTags, OPTIONAL_COLUMNS, REQUIRED_COLUMNS, type LineOutcome } from './line';
export { formatOf, HEADER_ROW_REASON, HeaderError, readRecords, REJECTS_HEADER, type Format, type SourceRecord } from './records';
export { BatchFailed, BatchSubmitter } from './submit';
export { Totals } from './summary';
export { validateRecordLine, type Input } from './validate-record';
export {
  claimUpload,
  importRejectsOf,
  rejectId,
  rejectsOfImport,
  REJECTS_KEPT,
  STALE_MS,
  UPLOADED,
  UploadRun,
  uploadsOf,
  type Claim,
  type ImportRejectDoc,
  type UploadDoc,
  type UploadRunOptions,
  type UploadState,
} from './uploads';
