import type { ComponentType, ReactElement } from 'react';

/**
 * Contract between the console shell (App.tsx) and the resource files in this folder.
 *
 * Each of carriers.tsx, pricelists.tsx, rates.tsx, transactions.tsx exports a const named like the
 * file in camelCase (`carriers`, `pricelists`, `rates`, `transactions`) of type ConsoleResource.
 * `name` is the GraphQL type name the API uses (ra-data-graphql-simple): 'Carrier', 'Pricelist',
 * 'PricelistRate' (rates), 'Transaction'. The menu shows `options.label` (e.g. 'Rates'). App.tsx renders one <Resource> per export.
 * holidays.tsx exports `holidays` ('Holiday', the calendar rate timings read); timing.tsx holds the rate
 * timing pieces (summary, field, form inputs) that rates, pricelists and transactions share.
 * reratings.tsx exports `reratings` ('Rerating': the runs, their progress, and the new-rerating page with
 * the dry run as the resource's create route).
 *
 * rate-decks.tsx and imports.tsx are custom pages: they export `rateDecks` and `imports` of type
 * ConsolePage. App.tsx mounts `element` under <CustomRoutes> at `path` (no leading slash, e.g.
 * 'rate-decks') and adds a menu item with `label` (and `icon` when given).
 *
 * Helpers for the resource files:
 * - `useCanWrite()` from '../auth/permissions': false for a read-only token; hide every
 *   create/edit/delete button when false (e.g. `<List actions={...}>`, `hasCreate`, `<Show
 *   actions={canWrite ? undefined : false}>`).
 * - `gql<T>(query, variables)` and `apiFetch(path, init)` from '../graphql' for calls outside the
 *   data provider (they add the stored bearer token; gql throws an Error with the GraphQL message).
 */
export interface ConsoleResource {
  /** GraphQL type name, e.g. 'Carrier'. */
  name: string;
  list?: ComponentType;
  show?: ComponentType;
  edit?: ComponentType;
  create?: ComponentType;
  icon?: ComponentType;
  options?: { label: string };
  /** Field shown when a record of this resource is referenced, e.g. 'carrier_tag'. */
  recordRepresentation?: string;
}

export interface ConsolePage {
  /** Route path below /console/, without leading slash, e.g. 'rate-decks'. */
  path: string;
  /** Menu label, e.g. 'Rate decks'. */
  label: string;
  element: ReactElement;
  icon?: ComponentType;
}
