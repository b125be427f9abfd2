/** Rerating runs (docs/RERATING.md): the selection, the dry run, starting a run; the workers do the batches. */
export { selectionFilter, selectionProblem, type RerateSelection } from './selection';
export { rateAgain } from './rate';
export {
  enqueueRerateBatch,
  previewRerating,
  RERATE_BATCH_SIZE,
  rerateJobId,
  rerateJobName,
  startRerating,
  type PreviewChange,
  type ReratingCounts,
  type ReratingDoc,
  type ReratingPreview,
  type ReratingState,
} from './runs';
