import type { Queue } from 'bullmq';
import type { Collections } from '../../shared/domain/store';
import type { ImportJob } from '../../shared/domain/queues/payloads';
import type { RatingIndex } from '../../shared/domain/rating';
import { previewRerating, startRerating, type RerateSelection, type ReratingDoc, type ReratingPreview } from '../../shared/domain/rerating';
import { countMatching, findPage, type ListWindow, type ReadLimits } from './documents';
import { allOf, idConditions, matchValue } from './query';

export interface ReratingFilter {
  id?: string | null;
  ids?: string[] | null;
  state?: 'running' | 'done' | null;
}

/**
 * Rerating runs (docs/RERATING.md): the dry run, starting a run (its batches run in the workers), and
 * the runs with their progress. A run's document is written by the workers as it goes.
 */
export class ReratingStore {
  constructor(
    private readonly collections: Collections,
    private readonly imports: Queue<ImportJob>,
    private readonly reads: ReadLimits,
  ) {}

  private query(filter: ReratingFilter) {
    return allOf<ReratingDoc>([...idConditions<ReratingDoc>(filter), ...matchValue<ReratingDoc>('state', filter.state)]);
  }

  find(id: string): Promise<ReratingDoc | null> {
    return this.collections.reratings.findOne({ _id: id });
  }

  list(filter: ReratingFilter, window: ListWindow): Promise<ReratingDoc[]> {
    return findPage(this.collections.reratings, this.query(filter), window, this.reads);
  }

  count(filter: ReratingFilter): Promise<number> {
    return countMatching(this.collections.reratings, this.query(filter), this.reads);
  }

  preview(index: RatingIndex, selection: RerateSelection, sample: number): Promise<ReratingPreview> {
    return previewRerating(this.collections, index, selection, sample, this.reads.maxTimeMS);
  }

  start(selection: RerateSelection): Promise<ReratingDoc> {
    return startRerating(this.collections, this.imports, selection);
  }
}
