/**
 * What a rerating run is (docs/RERATING.md), as stored: types only, so the collections' declaration
 * (src/shared/domain/store.ts) can name them without importing the code that runs them.
 */

/**
 * Which records a rerating run corrects (docs/RERATING.md): those whose call started in [from, to), and
 * optionally of these accounts, whose rate came from this pricelist or carrier, whose destination starts
 * with this prefix. Only records whose fee is taken (charged, imported) are corrected; records written
 * raw through the API, calls still being charged and calls being rolled back are left alone.
 */
export interface RerateSelection {
  from: Date;
  to: Date;
  account_tags: string[] | null;
  pricelist_tag: string | null;
  carrier_tag: string | null;
  /** Digits the destination (as stored) starts with. */
  prefix: string | null;
}

export type ReratingState = 'running' | 'done';

export interface ReratingCounts {
  /** Records read. */
  seen: number;
  /** Records whose fee changed (corrected through the ledger). */
  changed: number;
  /** Records rated again at the same fee. */
  unchanged: number;
  /** Records that could not be rated again (their carrier no longer routes them, no account) or not corrected (rolled back meanwhile). */
  skipped: number;
}

export interface ReratingDoc {
  _id: string;
  selection: RerateSelection;
  state: ReratingState;
  /** The next batch to process. */
  batch: number;
  /** Records per batch (RERATE_BATCH_SIZE unless the run was started with another). */
  batch_size?: number;
  /** The last record processed (`_id`), null before the first batch. */
  after: string | null;
  counts: ReratingCounts;
  /** Records the selection held when the run started, those still pending included (for progress; records may come and go meanwhile). */
  total?: number;
  /** Sum of (new fee - old fee) over the changed records: what the accounts were charged (+) or refunded (-). */
  difference: bigint;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}
