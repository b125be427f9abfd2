import { Admin, CustomRoutes, Resource } from 'react-admin';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router-dom';
import PeopleIcon from '@mui/icons-material/People';
import { authProvider } from './auth/authProvider';
import { LoginPage } from './auth/LoginPage';
import { createDataProvider } from './dataProvider';
import { makeLayout, makeMenu, type MenuPage } from './layout';
import { Dashboard } from './pages/Dashboard';
import { AccountCreate, AccountEdit, AccountList, AccountShow } from './pages/accounts';
import { carriers } from './resources/carriers';
import { holidays } from './resources/holidays';
import { imports } from './resources/imports';
import { pricelists } from './resources/pricelists';
import { rateDecks } from './resources/rate-decks';
import { rates } from './resources/rates';
import { reratings } from './resources/reratings';
import { transactions } from './resources/transactions';
import type { ConsolePage, ConsoleResource } from './resources/types';

const dataProvider = createDataProvider();

const account: ConsoleResource = {
  name: 'Account',
  list: AccountList,
  show: AccountShow,
  edit: AccountEdit,
  create: AccountCreate,
  icon: PeopleIcon,
  options: { label: 'Accounts' },
  recordRepresentation: 'account_tag',
};

const resources: ConsoleResource[] = [account, carriers, pricelists, rates, holidays, transactions, reratings];

/** Rate decks and imports are custom pages (ConsolePage); a ConsoleResource with a list works too. */
const extras: Array<ConsolePage | ConsoleResource> = [rateDecks, imports];
const pages = extras.filter((p): p is ConsolePage => 'element' in p);
resources.push(...extras.filter((p): p is ConsoleResource => !('element' in p)));

const menuPages: MenuPage[] = pages.map(({ path, label, icon }) => ({ path, label, icon }));
const Layout = makeLayout(
  makeMenu(
    resources.map((r) => r.name),
    menuPages,
  ),
);

function ConsoleAdmin() {
  return (
    <Admin
      title="Call rating console"
      basename="/console"
      dataProvider={dataProvider}
      authProvider={authProvider}
      loginPage={LoginPage}
      dashboard={Dashboard}
      layout={Layout}
      requireAuth
      disableTelemetry
    >
      {resources.map((r) => (
        <Resource
          key={r.name}
          name={r.name}
          list={r.list}
          show={r.show}
          edit={r.edit}
          create={r.create}
          icon={r.icon}
          options={r.options}
          recordRepresentation={r.recordRepresentation}
        />
      ))}
      <CustomRoutes>
        {pages.map((p) => (
          <Route key={p.path} path={`/${p.path}`} element={p.element} />
        ))}
      </CustomRoutes>
    </Admin>
  );
}

/** Real paths under /console/ (the API serves index.html for them), so every page has a reloadable URL. */
export function App() {
  return (
    <BrowserRouter>
      <Routes>
        <Route path="/console/*" element={<ConsoleAdmin />} />
        <Route path="*" element={<Navigate to="/console/" replace />} />
      </Routes>
    </BrowserRouter>
  );
}
