import {
  API_KEY_PREFIX,
  InvalidApiKeyError,
  InvalidClientIdError,
  MissingApiKeyError,
  apiKeyItemKey,
  assertClientId,
  bearerKey,
  generateApiKey,
  hashApiKey,
} from '../../lib/auth/api-keys';
import { putApiKeyRequest } from '../../lib/auth/register';

describe('API keys', () => {
  it('are long, random and URL-safe', () => {
    const keys = new Set(Array.from({ length: 100 }, generateApiKey));

    expect(keys.size).toBe(100);
    for (const key of keys) expect(key).toMatch(new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{43}$`));
  });

  it('are stored only as a SHA-256 hash', () => {
    const key = generateApiKey();

    const request = putApiKeyRequest('T', 'acme', key, 1);

    expect(JSON.stringify(request)).not.toContain(key);
    expect(request.Item).toMatchObject({ batch_id: `APIKEY#${hashApiKey(key)}`, owner_id: 'acme' });
  });

  it('live under a partition no batch id can take, out of every index', () => {
    const item = putApiKeyRequest('T', 'acme', generateApiKey(), 1).Item ?? {};

    expect(item.batch_id).toMatch(/#/);
    for (const indexKey of ['client_id', 'upload_ts', 'status_ts', 'log_ts', 'cat_ts']) expect(item).not.toHaveProperty(indexKey);
  });

  it('never replace a key registered to another client', () => {
    expect(putApiKeyRequest('T', 'acme', 'k'.repeat(20), 1).ConditionExpression).toBe('attribute_not_exists(batch_id) OR owner_id = :owner');
  });

  it('hash to the key item address deterministically', () => {
    expect(apiKeyItemKey(hashApiKey('abc'))).toEqual(apiKeyItemKey(hashApiKey('abc')));
  });
});

describe('bearerKey', () => {
  it('reads the key of a Bearer header', () => {
    expect(bearerKey('Bearer icw_abc')).toBe('icw_abc');
  });

  it('takes the scheme case-insensitively', () => {
    expect(bearerKey('bearer icw_abc')).toBe('icw_abc');
  });

  it.each([undefined, '', '   '])('reports a missing key for %p', (header) => {
    expect(() => bearerKey(header)).toThrow(MissingApiKeyError);
  });

  it.each(['Basic dXNlcjpwYXNz', 'icw_abc', 'Bearer', 'Bearer a b'])('refuses %p', (header) => {
    expect(() => bearerKey(header)).toThrow(InvalidApiKeyError);
  });
});

describe('assertClientId', () => {
  it.each(['demo', 'acme-corp_2', 'a'.repeat(64)])('accepts %p', (id) => {
    expect(() => assertClientId(id)).not.toThrow();
  });

  it.each(['', 'a/b', 'a b', 'a'.repeat(65), 'APIKEY#x'])('refuses %p', (id) => {
    expect(() => assertClientId(id)).toThrow(InvalidClientIdError);
  });
});
