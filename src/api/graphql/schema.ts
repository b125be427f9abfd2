import { scalarsModule } from '../../shared/domain/graphql-scalars';
import type { SchemaModule } from '../../shared/infra/http/graphql';
import { serviceVersion } from '../../shared/infra/version';
import { accountsModule } from './accounts';
import { carriersModule } from './carriers';
import { commonModule } from './common/schema';
import { dashboardModule } from './dashboard';
import { holidaysModule } from './holidays';
import { importsModule } from './imports';
import { pricelistsModule } from './pricelists';
import { ratesModule } from './rates';
import { reratingsModule } from './reratings';
import { routingModule } from './routing';
import { transactionsModule } from './transactions';
import { viewerModule } from './viewer';

/**
 * The management schema is assembled from one module per resource (type definitions and resolvers
 * side by side); this file only lists them.
 */

const base: SchemaModule = {
  typeDefs: /* GraphQL */ `
    type Query {
      "Version of the running service."
      version: String!
    }
    type Mutation
  `,
  resolvers: {
    Query: { version: () => serviceVersion },
  },
};

export const apiModules: SchemaModule[] = [
  base,
  scalarsModule,
  commonModule,
  carriersModule,
  pricelistsModule,
  ratesModule,
  holidaysModule,
  reratingsModule,
  accountsModule,
  transactionsModule,
  routingModule,
  viewerModule,
  dashboardModule,
  importsModule,
];
