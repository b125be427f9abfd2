import type { AuthProvider } from 'react-admin';
import { ApiError, gql } from '../graphql';
import { clearToken, getToken, setToken } from './token';

const SCOPES_KEY = 'rating.console.scopes';
const NAME_KEY = 'rating.console.name';

export interface Viewer {
  name: string;
  scopes: string[];
}

const isMissingField = (error: unknown) => error instanceof ApiError && /Cannot query field "viewer"/.test(error.message);

/**
 * Who the token belongs to and what it may do. Falls back, while the API has no `viewer` field,
 * to a read check (`{ __typename }`) and a write check (`mutation { __typename }`: the API wants
 * the write scope for any mutation, and this one changes nothing).
 */
export async function fetchViewer(token: string): Promise<Viewer> {
  try {
    const { viewer } = await gql<{ viewer: Viewer }>('query Viewer { viewer { name scopes } }', {}, token);
    return { name: viewer.name, scopes: viewer.scopes ?? [] };
  } catch (error) {
    if (!isMissingField(error)) throw error;
  }
  await gql<unknown>('query Probe { __typename }', {}, token);
  const scopes = ['read'];
  try {
    await gql<unknown>('mutation Probe { __typename }', {}, token);
    scopes.push('write');
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 403) throw error;
  }
  return { name: 'operator', scopes };
}

function remember(viewer: Viewer) {
  window.localStorage.setItem(SCOPES_KEY, JSON.stringify(viewer.scopes));
  window.localStorage.setItem(NAME_KEY, viewer.name);
}

function forget() {
  clearToken();
  try {
    window.localStorage.removeItem(SCOPES_KEY);
    window.localStorage.removeItem(NAME_KEY);
  } catch {
    // storage unavailable
  }
}

function storedScopes(): string[] {
  try {
    const parsed: unknown = JSON.parse(window.localStorage.getItem(SCOPES_KEY) ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((s): s is string => typeof s === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * The viewer is asked once per page load (the token's scopes may have changed since login); until
 * it answers, and when the API cannot be reached, the scopes stored at login stand. A 401 rejects,
 * so react-admin logs out (checkError).
 */
let refreshed: Promise<string[]> | null = null;

function currentScopes(): Promise<string[]> {
  const token = getToken();
  if (!token) return Promise.resolve([]);
  if (refreshed === null) {
    refreshed = fetchViewer(token).then(
      (viewer) => {
        remember(viewer);
        return viewer.scopes;
      },
      (error: unknown) => {
        if (error instanceof ApiError && error.status === 401) {
          refreshed = null;
          throw error;
        }
        return storedScopes();
      },
    );
  }
  return refreshed;
}

/** Token login: the token is checked with the `viewer` query, then kept in localStorage. */
export const authProvider: AuthProvider = {
  async login(params: { token?: string }) {
    const token = (params.token ?? '').trim();
    if (token === '') throw new Error('Enter an API token');
    let viewer: Viewer;
    try {
      viewer = await fetchViewer(token);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) throw new Error('Invalid token');
      if (error instanceof ApiError && error.status === 403) throw new Error('This token has neither the read nor the write scope');
      throw new Error(`Cannot reach the API: ${error instanceof Error ? error.message : String(error)}`);
    }
    setToken(token);
    remember(viewer);
    refreshed = Promise.resolve(viewer.scopes);
  },
  async logout() {
    forget();
    refreshed = null;
  },
  async checkAuth() {
    if (!getToken()) throw new Error('Sign in with an API token');
  },
  async checkError(error: { status?: number } | undefined) {
    if (error?.status === 401) {
      forget();
      refreshed = null;
      throw new Error('The token is no longer valid');
    }
  },
  async getPermissions() {
    return currentScopes();
  },
  async getIdentity() {
    const name = window.localStorage.getItem(NAME_KEY) ?? 'operator';
    return { id: name, fullName: name };
  },
};
