import { usePermissions } from 'react-admin';

/** The viewer's scopes, as returned by the auth provider's getPermissions. */
export function useScopes(): string[] {
  const { permissions } = usePermissions<string[] | undefined>();
  return Array.isArray(permissions) ? permissions : [];
}

/** True when the viewer's token has the `write` scope (create, edit, delete, top-up). */
export function useCanWrite(): boolean {
  return useScopes().includes('write');
}
