// Configuration is validated once, at cold start: a bad number stops the function there, naming the variable.
import { ConfigError, envBoolean, loadIngestConfig, redetectPaging, requiredSecret } from '../../lib/config';

const BASE = { TABLE_NAME: 'T', BUCKET_NAME: 'B' };

/** Runs with only the required variables and `env` set (not the local stack's, which a test run may have applied). */
function withEnv<T>(env: Record<string, string>, run: () => T): T {
  const saved = process.env;
  process.env = { PATH: saved.PATH, ...BASE, ...env };
  try {
    return run();
  } finally {
    process.env = saved;
  }
}

/** The queues and bus a deployed ingest is given. */
const INGEST_WIRING = {
  INGEST_QUEUE_URL: 'https://sqs.example/ingest',
  CALLBACK_QUEUE_URL: 'https://sqs.example/callbacks',
  EVENT_BUS_NAME: 'default',
};

/** The ingest function's cold start: its module loaded afresh, as Lambda loads it. */
const coldStartIngest = (env: Record<string, string>) =>
  withEnv(env, () =>
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a cold start is a fresh, synchronous load
      require('../../functions/ingest/handler');
    }),
  );

describe('the queues a deployed function is given', () => {
  it.each(Object.keys(INGEST_WIRING))('a missing %s stops the ingest at cold start, naming it', (name) => {
    const env: Record<string, string> = { ...INGEST_WIRING };
    delete env[name];
    expect(() => coldStartIngest(env)).toThrow(`missing required environment variable ${name}`);
  });

  it('the ingest starts with all of them', () => {
    expect(() => coldStartIngest(INGEST_WIRING)).not.toThrow();
  });

  it.each([
    ['batches', 'ERASE_QUEUE_URL'],
    ['callbacks', 'CALLBACK_QUEUE_URL'],
  ])('a missing queue stops the %s function at cold start, naming %s', (fn, name) => {
    const env = {
      ...INGEST_WIRING,
      ERASE_QUEUE_URL: 'https://sqs.example/erase',
      CURSOR_SECRET: 'c'.repeat(32),
      CALLBACK_SIGNING_KEY: 'k'.repeat(32),
    };
    delete (env as Record<string, string>)[name];
    expect(() =>
      withEnv(env, () =>
        jest.isolateModules(() => {
          // eslint-disable-next-line @typescript-eslint/no-require-imports -- a cold start is a fresh, synchronous load
          require(`../../functions/${fn}/handler`);
        }),
      ),
    ).toThrow(`missing required environment variable ${name}`);
  });
});

describe('INGEST_PARALLELISM', () => {
  it.each(['abc', '0', '65', '2.5'])('refuses %s at start, naming the variable', (value) => {
    expect(() => withEnv({ INGEST_PARALLELISM: value }, loadIngestConfig)).toThrow(
      new ConfigError(`environment variable INGEST_PARALLELISM must be an integer in 1..64, got "${value}"`),
    );
  });

  it('stops the ingest function at cold start, before any message is taken', () => {
    expect(() =>
      withEnv({ ...INGEST_WIRING, INGEST_PARALLELISM: 'abc' }, () =>
        jest.isolateModules(() => {
          // eslint-disable-next-line @typescript-eslint/no-require-imports -- a cold start is a fresh, synchronous load
          require('../../functions/ingest/handler');
        }),
      ),
    ).toThrow(/INGEST_PARALLELISM/);
  });

  it('defaults to 4 and takes a valid count', () => {
    expect([withEnv({}, loadIngestConfig).parallelism, withEnv({ INGEST_PARALLELISM: '16' }, loadIngestConfig).parallelism]).toEqual([
      4, 16,
    ]);
  });
});

describe('other numbers from the environment', () => {
  it.each([
    ['CAT_MIN_CONFIDENCE', '101'],
    ['REKOGNITION_MAX_LABELS', '0'],
    ['MAX_UPLOAD_BYTES', 'lots'],
    ['CLAIM_LEASE_SECONDS', '-1'],
    ['DEFAULT_RETENTION_DAYS', '0'],
  ])('refuses %s=%s, naming it', (name, value) => {
    expect(() => withEnv({ [name]: value }, loadIngestConfig)).toThrow(new RegExp(`^environment variable ${name} must be`));
  });

  it('reads DDB_TRANSACTIONS as true or false only, true by default', () => {
    expect(withEnv({}, loadIngestConfig).transactions).toBe(true);
    expect(withEnv({ DDB_TRANSACTIONS: 'false' }, () => envBoolean('DDB_TRANSACTIONS', true))).toBe(false);
    expect(() => withEnv({ DDB_TRANSACTIONS: 'yes' }, loadIngestConfig)).toThrow(/DDB_TRANSACTIONS must be true or false/);
  });
});

describe('secrets from the environment', () => {
  it('refuses a missing or short key, naming it, and takes one long enough', () => {
    expect(() => withEnv({}, () => requiredSecret('CURSOR_SECRET', 32))).toThrow(
      new ConfigError('missing required environment variable CURSOR_SECRET'),
    );
    expect(() => withEnv({ CURSOR_SECRET: 'short' }, () => requiredSecret('CURSOR_SECRET', 32))).toThrow(
      new ConfigError('environment variable CURSOR_SECRET must be at least 32 characters'),
    );
    expect(withEnv({ CURSOR_SECRET: 'k'.repeat(32) }, () => requiredSecret('CURSOR_SECRET', 32))).toBe('k'.repeat(32));
  });
});

describe('REDETECT_PAGE_SIZE', () => {
  it("is unset by default (the run's own pages), takes 1..100 and refuses anything else, naming it", () => {
    expect([withEnv({}, redetectPaging), withEnv({ REDETECT_PAGE_SIZE: '25' }, redetectPaging)]).toEqual([{}, { pageSize: 25 }]);
    for (const value of ['0', '101', '2.5', 'many']) {
      expect(() => withEnv({ REDETECT_PAGE_SIZE: value }, redetectPaging)).toThrow(/^environment variable REDETECT_PAGE_SIZE must be/);
    }
  });
});
