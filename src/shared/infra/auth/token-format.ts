import { createHash, randomBytes } from 'node:crypto';

/**
 * What a token is, independent of where it is stored: a random secret shown once, kept only as
 * its SHA-256. Secrets are 256-bit random values, so a plain SHA-256 (no slow KDF) cannot be
 * reversed by guessing, and lookups stay one hash away from an exact unique-key read.
 */

export const SCOPES = ['read', 'write', 'agent'] as const;
export type Scope = (typeof SCOPES)[number];

/** Prefix that makes a leaked secret recognisable to secret scanners and people. */
const SECRET_PREFIX = 'rt_';
/** Bootstrap secrets come from operators; refuse ones short enough to guess. */
export const MIN_SECRET_LENGTH = 16;
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export interface BootstrapToken {
  name: string;
  scopes: Scope[];
  /** SHA-256 hex of the secret; the secret itself is not kept after parsing. */
  hash: string;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export function validTokenName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

/**
 * Parses a scope list written with `,` (CLI) or `+` (RATING_TOKENS, where `,` separates tokens).
 * Returns the problems instead of throwing so that configuration can report all of them at once.
 */
export function parseScopes(text: string): { scopes: Scope[]; problems: string[] } {
  const parts = text
    .split(/[+,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const problems = parts.filter((s) => !isScope(s)).map((s) => `unknown scope "${s}" (use ${SCOPES.join(', ')})`);
  if (parts.length === 0) problems.push('at least one scope is required');
  return { scopes: [...new Set(parts.filter(isScope))], problems };
}

/**
 * `RATING_TOKENS`: entries `name:scope1+scope2:secret` separated by `,`. The secret is everything
 * after the second `:` so it may itself contain `:`; it may not contain `,`.
 */
export function parseBootstrapTokens(text: string | undefined): { tokens: BootstrapToken[]; problems: string[] } {
  const tokens: BootstrapToken[] = [];
  const problems: string[] = [];
  /** The entry (0-based) each token came from: malformed entries make none. */
  const entryOf: number[] = [];
  if (text === undefined) return { tokens, problems };
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  entries.forEach((entry, index) => {
    const first = entry.indexOf(':');
    const second = first < 0 ? -1 : entry.indexOf(':', first + 1);
    const where = `RATING_TOKENS entry ${index + 1}`;
    if (first < 0 || second < 0) {
      problems.push(`${where} must look like name:scope1+scope2:secret`);
      return;
    }
    const name = entry.slice(0, first);
    const scopes = parseScopes(entry.slice(first + 1, second));
    const secret = entry.slice(second + 1);
    if (!validTokenName(name)) problems.push(`${where}: name must be 1-64 letters, digits, "_", "." or "-"`);
    problems.push(...scopes.problems.map((p) => `${where} (${name}): ${p}`));
    if (secret.length < MIN_SECRET_LENGTH) problems.push(`${where} (${name}): secret must be at least ${MIN_SECRET_LENGTH} characters`);
    if (tokens.some((t) => t.name === name)) problems.push(`${where}: duplicate name "${name}"`);
    const hash = hashSecret(secret);
    // A request is matched to a token by its secret: two tokens sharing one leave its scopes to chance.
    const same = tokens.findIndex((t) => t.hash === hash);
    if (same >= 0 && secret.length >= MIN_SECRET_LENGTH) problems.push(`${where} (${name}): the same secret as entry ${entryOf[same] + 1}`);
    tokens.push({ name, scopes: scopes.scopes, hash });
    entryOf.push(index);
  });
  return { tokens, problems };
}
