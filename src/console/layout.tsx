import type { ReactNode } from 'react';
import { AppBar, Layout, Menu, TitlePortal, useBasename, useResourceDefinitions } from 'react-admin';
import { Typography } from '@mui/material';
import ViewListIcon from '@mui/icons-material/ViewList';
import type { ConsolePage } from './resources/types';

/** The custom pages (rate decks, imports) App.tsx mounts, for the menu. */
export interface MenuPage {
  path: string;
  label: string;
  icon?: ConsolePage['icon'];
}

/** Menu order: Dashboard, Accounts, Carriers, Pricelists, Rates, Holidays, Transactions, Reratings, then the custom pages. */
export function makeMenu(resourceOrder: string[], pages: MenuPage[]) {
  return function ConsoleMenu() {
    const definitions = useResourceDefinitions();
    // Menu.Item links are not prefixed with the Admin's basename (/console); resource items are.
    const basename = useBasename();
    return (
      <Menu>
        <Menu.DashboardItem primaryText="Dashboard" />
        {resourceOrder
          .filter((name) => definitions[name]?.hasList)
          .map((name) => (
            <Menu.ResourceItem key={name} name={name} />
          ))}
        {pages.map((page) => {
          const Icon = page.icon ?? ViewListIcon;
          return <Menu.Item key={page.path} to={`${basename}/${page.path}`} primaryText={page.label} leftIcon={<Icon />} />;
        })}
      </Menu>
    );
  };
}

function ConsoleAppBar() {
  return (
    <AppBar>
      <Typography variant="h6" component="span" sx={{ mr: 2, whiteSpace: 'nowrap' }}>
        Call rating console
      </Typography>
      <TitlePortal />
    </AppBar>
  );
}

export function makeLayout(menu: () => ReactNode) {
  return function ConsoleLayout({ children }: { children: ReactNode }) {
    return (
      <Layout appBar={ConsoleAppBar} menu={menu}>
        {children}
      </Layout>
    );
  };
}
