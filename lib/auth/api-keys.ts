// API keys: each key belongs to one client and is stored only as its SHA-256 hash (lib/store/client/keys.ts holds
// the items; the client ids it reserves for them are refused here). This module reads keys; registering one is
// register.ts, so the API functions, which only authenticate, carry no key-writing code.
import { createHash, randomBytes } from 'node:crypto';
import { IceCatError } from '../errors';
import { ID_PATTERN, ID_RULE } from '../ids';
import { RESERVED_CLIENT_IDS } from '../store/table/schema';

export class AuthError extends IceCatError {
  override name = 'AuthError';
  readonly code: string = 'unauthorized';
}
export class MissingApiKeyError extends AuthError {
  override name = 'MissingApiKeyError';
}
export class InvalidApiKeyError extends AuthError {
  override name = 'InvalidApiKeyError';
}
/** A key (given, as the demo key is) is already registered to another client. */
export class ApiKeyConflictError extends AuthError {
  override name = 'ApiKeyConflictError';
}
export class InvalidClientIdError extends AuthError {
  override name = 'InvalidClientIdError';
}

export const API_KEY_PREFIX = 'icw_';
/** Keys are `icw_` + 32 random bytes in base64url: a fast hash is enough, nothing to brute-force. */
export const API_KEY_PATTERN = /^[A-Za-z0-9_-]{16,256}$/;
export const generateApiKey = (): string => API_KEY_PREFIX + randomBytes(32).toString('base64url');

export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

export function assertClientId(clientId: string): void {
  if (!ID_PATTERN.test(clientId)) throw new InvalidClientIdError(`client id "${clientId}" must be ${ID_RULE}`);
  if (RESERVED_CLIENT_IDS.has(clientId)) throw new InvalidClientIdError(`client id "${clientId}" is reserved`);
}

/** The key from an `Authorization: Bearer <key>` header. */
export function bearerKey(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw new MissingApiKeyError('missing Authorization: Bearer <api key>');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
  if (!match?.[1]) throw new InvalidApiKeyError('Authorization must be "Bearer <api key>"');
  return match[1];
}

/** Who owns a key, by its hash: what authenticating asks of the store (lib/store/client/keys.ts ApiKeyStore). */
export interface ApiKeyOwners {
  ownerOf(keyHash: string): Promise<string | undefined>;
}

export interface AuthenticatorOptions {
  keys: ApiKeyOwners;
  /** How long a container trusts a key it has looked up. */
  cacheMs?: number;
  now?: () => number;
}

/** Resolves bearer keys to client ids, remembering good keys for a while so most requests cost no read. */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, { clientId: string; until: number }>();
  private readonly cacheMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: AuthenticatorOptions) {
    this.cacheMs = opts.cacheMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  /** The client of an Authorization header; AuthError when there is no key or it is unknown. */
  async authenticate(authorization: string | undefined): Promise<string> {
    const key = bearerKey(authorization);
    if (!API_KEY_PATTERN.test(key)) throw new InvalidApiKeyError('unknown API key');
    const hash = hashApiKey(key);
    const cached = this.cache.get(hash);
    if (cached && cached.until > this.now()) return cached.clientId;
    const owner = await this.opts.keys.ownerOf(hash);
    if (owner === undefined) throw new InvalidApiKeyError('unknown API key');
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(hash, { clientId: owner, until: this.now() + this.cacheMs });
    return owner;
  }
}
