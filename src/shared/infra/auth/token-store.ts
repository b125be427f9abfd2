import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { generateSecret, hashSecret, Scope } from './token-format';

/** A token as stored: never the secret, only its SHA-256. Revoked tokens are kept for the record. */
export interface TokenDoc {
  _id: string;
  name: string;
  hash: string;
  scopes: Scope[];
  created_at: Date;
  revoked_at: Date | null;
}

export function tokensCollection(db: Db): Collection<TokenDoc> {
  return db.collection<TokenDoc>('tokens');
}

/** Lookups go by `hash`, an exact unique key (docs/DESIGN.md section 2: no scans on the hot path). */
export async function ensureTokenIndexes(db: Db): Promise<void> {
  await tokensCollection(db).createIndex({ hash: 1 }, { unique: true });
}

export async function findTokenByHash(db: Db, hash: string): Promise<TokenDoc | null> {
  return tokensCollection(db).findOne({ hash });
}

/** Whether any unrevoked token exists (the production start check). The collection is small. */
export async function hasActiveTokens(db: Db): Promise<boolean> {
  return (await tokensCollection(db).findOne({ revoked_at: null }, { projection: { _id: 1 } })) !== null;
}

/**
 * Whether tokens were ever created, revoked ones included: decides the open development mode, so
 * revoking the last token locks the service instead of silently opening it to everybody.
 */
export async function hasAnyToken(db: Db): Promise<boolean> {
  return (await tokensCollection(db).findOne({}, { projection: { _id: 1 } })) !== null;
}

export class TokenNameTaken extends Error {
  constructor(name: string) {
    super(`an active token named "${name}" already exists; revoke it first or choose another name`);
    this.name = 'TokenNameTaken';
  }
}

/** Creates a token and returns its secret, which is not stored and cannot be shown again. */
export async function createToken(db: Db, name: string, scopes: Scope[]): Promise<{ token: TokenDoc; secret: string }> {
  const tokens = tokensCollection(db);
  // Names identify tokens to operators (revoke by name), so two active ones may not share one.
  // This check is not atomic; the CLI is run by hand, one operator at a time.
  if (await tokens.findOne({ name, revoked_at: null }, { projection: { _id: 1 } })) throw new TokenNameTaken(name);
  const secret = generateSecret();
  const token: TokenDoc = { _id: randomUUID(), name, hash: hashSecret(secret), scopes, created_at: new Date(), revoked_at: null };
  await tokens.insertOne(token);
  return { token, secret };
}

/** Revokes the active tokens whose id or name is `nameOrId`; returns how many. */
export async function revokeToken(db: Db, nameOrId: string): Promise<number> {
  const result = await tokensCollection(db).updateMany(
    { $or: [{ _id: nameOrId }, { name: nameOrId }], revoked_at: null },
    { $set: { revoked_at: new Date() } },
  );
  return result.modifiedCount;
}

export async function listTokens(db: Db): Promise<Omit<TokenDoc, 'hash'>[]> {
  return tokensCollection(db)
    .find({}, { projection: { hash: 0 } })
    .sort({ created_at: 1 })
    .toArray();
}
