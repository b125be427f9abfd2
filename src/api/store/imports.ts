import type { Db, Filter } from 'mongodb';
import { importRejectsOf, rejectsOfImport, UPLOADED, uploadsOf, type ImportRejectDoc, type UploadDoc } from '../../shared/domain/imports';
import { countMatching, findPage, type ListWindow, type ReadLimits } from './documents';
import { allOf, idConditions, matchValue, textSearch } from './query';

export interface ImportFilter {
  id?: string | null;
  ids?: string[] | null;
  state?: string | null;
  /** react-admin full-text search (textSearch) over the uploaded file's name. */
  q?: string | null;
}

export const IMPORT_SEARCH_PATHS = ['name'] as const;

/** Uploaded imports only: the CLI's imports keep no progress (src/shared/domain/imports/uploads.ts). */
export function importQuery(filter: ImportFilter): Filter<UploadDoc> {
  return allOf<UploadDoc>([
    UPLOADED,
    ...idConditions<UploadDoc>(filter),
    ...matchValue<UploadDoc>('state', filter.state),
    ...textSearch<UploadDoc>(filter.q, IMPORT_SEARCH_PATHS),
  ]);
}

/** Imports uploaded through the management API (`POST /v1/imports`): read only. */
export class ImportStore {
  constructor(
    private readonly db: Db,
    private readonly reads: ReadLimits,
  ) {}

  find(id: string): Promise<UploadDoc | null> {
    return uploadsOf(this.db).findOne(importQuery({ id }), { maxTimeMS: this.reads.maxTimeMS });
  }

  list(filter: ImportFilter, window: ListWindow): Promise<UploadDoc[]> {
    return findPage(uploadsOf(this.db), importQuery(filter), window, this.reads);
  }

  count(filter: ImportFilter): Promise<number> {
    return countMatching(uploadsOf(this.db), importQuery(filter), this.reads);
  }

  /** The first `limit` rejected lines kept for the import, in line order (an `_id` range). */
  rejects(importId: string, limit: number): Promise<ImportRejectDoc[]> {
    return importRejectsOf(this.db)
      .find(rejectsOfImport(importId), { maxTimeMS: this.reads.maxTimeMS })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
  }
}
