import { createHash } from 'node:crypto';
import { generateSecret, hashSecret, parseBootstrapTokens, parseScopes } from '../../../src/shared/infra/auth/token-format';

describe('token format', () => {
  it('hashes secrets with SHA-256 and generates 256-bit prefixed secrets', () => {
    expect(hashSecret('abc')).toBe(createHash('sha256').update('abc').digest('hex'));
    const secret = generateSecret();
    expect(secret).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
    expect(generateSecret()).not.toBe(secret);
  });

  it('parses scope lists written with , or +', () => {
    expect(parseScopes('read,write')).toEqual({ scopes: ['read', 'write'], problems: [] });
    expect(parseScopes('agent+read+agent')).toEqual({ scopes: ['agent', 'read'], problems: [] });
    expect(parseScopes('read,root').problems).toEqual(['unknown scope "root" (use read, write, agent)']);
    expect(parseScopes('').problems).toEqual(['at least one scope is required']);
  });

  it('parses RATING_TOKENS entries, keeping only hashes; the secret may contain ":"', () => {
    const { tokens, problems } = parseBootstrapTokens('ops:read+write:0123456789abcdef, switch:agent:a:b:c:d:e:f:g:h:i');
    expect(problems).toEqual([]);
    expect(tokens).toEqual([
      { name: 'ops', scopes: ['read', 'write'], hash: hashSecret('0123456789abcdef') },
      { name: 'switch', scopes: ['agent'], hash: hashSecret('a:b:c:d:e:f:g:h:i') },
    ]);
    expect(parseBootstrapTokens(undefined)).toEqual({ tokens: [], problems: [] });
  });

  it('reports every bad entry without echoing secrets', () => {
    const { problems } = parseBootstrapTokens(
      'nocolons,bad name:read:0123456789abcdef,x:admin:1123456789abcdef,y:read:short,y:read:2123456789abcdef',
    );
    expect(problems).toEqual([
      'RATING_TOKENS entry 1 must look like name:scope1+scope2:secret',
      'RATING_TOKENS entry 2: name must be 1-64 letters, digits, "_", "." or "-"',
      'RATING_TOKENS entry 3 (x): unknown scope "admin" (use read, write, agent)',
      'RATING_TOKENS entry 4 (y): secret must be at least 16 characters',
      'RATING_TOKENS entry 5: duplicate name "y"',
    ]);
    expect(problems.join(' ')).not.toContain('123456789abcdef');
  });

  // Which token's scopes would a request carrying that secret get? Neither is right to guess.
  it('refuses two entries with the same secret, naming the first', () => {
    const { problems } = parseBootstrapTokens('nocolons,reader:read:0123456789abcdef,switch:agent:0123456789abcdef');
    expect(problems).toEqual([
      'RATING_TOKENS entry 1 must look like name:scope1+scope2:secret',
      'RATING_TOKENS entry 3 (switch): the same secret as entry 2',
    ]);
  });
});
