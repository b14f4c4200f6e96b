import {
  API_KEY_PREFIX,
  assertClientId,
  bearerKey,
  generateApiKey,
  hashApiKey,
  InvalidApiKeyError,
  InvalidClientIdError,
  MissingApiKeyError,
} from '../../lib/auth/api-keys';
import { apiKeyItemKey, getApiKeyRequest } from '../../lib/store/client/keys';
import { putApiKeyRequest, putClientRequest } from '../../lib/store/client/registrations';

describe('API keys', () => {
  it('are long, random and URL-safe', () => {
    const keys = new Set(Array.from({ length: 100 }, generateApiKey));

    expect(keys.size).toBe(100);
    for (const key of keys) expect(key).toMatch(new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{43}$`));
  });

  it('are stored only as a SHA-256 hash', () => {
    const key = generateApiKey();

    const request = putApiKeyRequest('T', 'acme', hashApiKey(key), 1);

    expect(JSON.stringify(request)).not.toContain(key);
    expect(request.Item).toMatchObject({ batch_id: `APIKEY#${hashApiKey(key)}`, owner_id: 'acme' });
  });

  it('live under a partition no batch id can take, out of every index', () => {
    const item = putApiKeyRequest('T', 'acme', hashApiKey(generateApiKey()), 1).Item ?? {};

    expect(item.batch_id).toMatch(/#/);
    for (const indexKey of ['client_id', 'upload_ts', 'status_ts', 'log_ts', 'cat_ts']) expect(item).not.toHaveProperty(indexKey);
  });

  it('never replace a key registered to another client', () => {
    const request = putApiKeyRequest('T', 'acme', hashApiKey('k'.repeat(20)), 1);
    expect(request.ConditionExpression).toBe('attribute_not_exists(#partition) OR #owner = :owner');
    expect(request.ExpressionAttributeNames).toEqual({ '#partition': 'batch_id', '#owner': 'owner_id' });
    expect(request.ExpressionAttributeValues).toEqual({ ':owner': 'acme' });
  });

  it('hash to the key item address deterministically', () => {
    expect(apiKeyItemKey(hashApiKey('abc'))).toEqual(apiKeyItemKey(hashApiKey('abc')));
  });

  it('are looked up by their hash, reading only the owner', () => {
    const request = getApiKeyRequest('T', hashApiKey('icw_lookup'));

    expect(request.Key).toEqual({ batch_id: `APIKEY#${hashApiKey('icw_lookup')}`, img_fprint: '#KEY' });
    expect(request.ProjectionExpression).toBe('owner_id');
  });

  it('register a client once, keeping the first registration time', () => {
    const request = putClientRequest('T', 'acme', 5);

    expect(request.Item).toEqual({ batch_id: 'CLIENT#acme', img_fprint: '#CLIENT', registered_ts: 5 });
    expect(request.ConditionExpression).toBe('attribute_not_exists(#partition)');
    expect(request.ExpressionAttributeNames).toEqual({ '#partition': 'batch_id' });
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
