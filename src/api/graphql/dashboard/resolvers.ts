import type { ApiContext, ApiResolvers } from '../context';

export const dashboardResolvers: ApiResolvers = {
  Query: {
    dashboard: (_root: unknown, _args: unknown, { stores }: ApiContext) => stores.dashboard.get(),
  },
};
