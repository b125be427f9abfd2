/** Moved to src/shared/domain/imports/line.ts (uploads through the management API validate lines the same way). */
export {
  csvLine,
  headerProblems,
  jsonLine,
  splitTags,
  OPTIONAL_COLUMNS,
  REQUIRED_COLUMNS,
  type LineOutcome,
} from '../../shared/domain/imports/line';
