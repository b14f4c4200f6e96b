import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildLocalEnv, DEFAULT_PORTS, LocalEnvError, portsFromEnv } from '../../local/contract';
import { copySourceForS3rver } from '../../local/s3/s3';

describe('buildLocalEnv', () => {
  it('holds the local environment contract for the given ports', () => {
    // Act
    const env = buildLocalEnv(
      { api: 1, s3: 2, dynamodb: 3, rekognition: 4, bridge: 5 },
      { dataDir: '/d', cursorSecret: 's'.repeat(32), callbackSigningKey: 'k'.repeat(64) },
    );

    // Assert
    expect(env).toMatchObject({
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:2',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:3',
      AWS_ENDPOINT_URL_REKOGNITION: 'http://127.0.0.1:4',
      S3_FORCE_PATH_STYLE: 'true',
      TABLE_NAME: 'IceCatWrangler',
      BUCKET_NAME: 'icecat-images',
      ICECAT_API_PORT: '1',
      ICECAT_BRIDGE_URL: 'http://127.0.0.1:5',
      ICECAT_DATA_DIR: '/d',
    });
  });

  it('leases claims for 30 s unless the caller set CLAIM_LEASE_SECONDS', () => {
    const ports = { api: 1, s3: 2, dynamodb: 3, rekognition: 4, bridge: 5 };
    const secrets = { dataDir: '/d', cursorSecret: 'x', callbackSigningKey: 'k' };

    expect(buildLocalEnv(ports, secrets).CLAIM_LEASE_SECONDS).toBe('30');
    expect(buildLocalEnv(ports, { ...secrets, claimLeaseSeconds: '5' }).CLAIM_LEASE_SECONDS).toBe('5');
  });

  it('points DynamoDB at an external endpoint when one is given', () => {
    const env = buildLocalEnv(DEFAULT_PORTS, {
      dataDir: '/d',
      cursorSecret: 'x',
      callbackSigningKey: 'k',
      dynamodbEndpoint: 'http://127.0.0.1:9999',
    });

    expect(env.AWS_ENDPOINT_URL_DYNAMODB).toBe('http://127.0.0.1:9999');
  });

  it("sets AWS's thresholds, from serverless.yml: the local detector answers on Rekognition's confidence scale", () => {
    // Arrange
    const yml = readFileSync(path.join(__dirname, '..', '..', 'serverless.yml'), 'utf8');
    const onAws = (key: string): string | undefined => new RegExp(`^\\s+${key}: (\\d+)$`, 'm').exec(yml)?.[1];

    // Act
    const env = buildLocalEnv(DEFAULT_PORTS, { dataDir: '/d', cursorSecret: 'x', callbackSigningKey: 'k' });

    // Assert
    expect([env.CAT_MIN_CONFIDENCE, env.REKOGNITION_MIN_CONFIDENCE]).toEqual([onAws('catMinConfidence'), onAws('minConfidence')]);
    expect([env.CAT_MIN_CONFIDENCE, env.REKOGNITION_MIN_CONFIDENCE]).toEqual(['80', '20']);
  });
});

describe('portsFromEnv', () => {
  it('overrides only the ports whose ICECAT_*_PORT is set', () => {
    expect(portsFromEnv({ ICECAT_S3_PORT: '5000', ICECAT_API_PORT: '' })).toEqual({ ...DEFAULT_PORTS, s3: 5000 });
  });

  it('refuses a value that is not a port, naming the variable', () => {
    expect(() => portsFromEnv({ ICECAT_DYNAMODB_PORT: 'eight thousand' })).toThrow(LocalEnvError);
    expect(() => portsFromEnv({ ICECAT_DYNAMODB_PORT: '70000' })).toThrow(/ICECAT_DYNAMODB_PORT/);
  });
});

describe('copySourceForS3rver', () => {
  it('rewrites an SDK-encoded copy source so that decodeURI yields the real bucket/key', () => {
    // Arrange
    const key = 'uploads/demo/b/a+b & c=d;e,f:g@h$i?j#k (ü) 100%.jpg';
    const header = `icecat-images/${encodeURIComponent(key).replace(/%2F/g, '/')}`;

    // Act
    const rewritten = copySourceForS3rver(header);

    // Assert
    expect(decodeURI(rewritten)).toBe(`icecat-images/${key}`);
  });

  it('drops a versionId query, which s3rver does not keep', () => {
    expect(decodeURI(copySourceForS3rver('/b/k%2B1.jpg?versionId=3'))).toBe('/b/k+1.jpg');
  });
});
