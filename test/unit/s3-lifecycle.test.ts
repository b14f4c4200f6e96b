// The local S3's lifecycle: the deployed bucket's rules (resources/storage.yml, days from serverless.yml's custom
// settings), read as the local stack applies them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { bucketLifecycleRulesFromYaml, isExpiredObject } from '../../local/s3/lifecycle';

const ROOT = path.join(__dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const DAY_MS = 86_400_000;

describe('bucketLifecycleRulesFromYaml', () => {
  it('reads each prefix rule of the deployed bucket with its days resolved from the custom settings', () => {
    // Act
    const rules = bucketLifecycleRulesFromYaml(read('resources/storage.yml'), read('serverless.yml'));

    // Assert
    expect(Object.fromEntries(rules.map((r) => [r.prefix, r.days]))).toEqual({
      'uploads/': 14,
      'processed/': 365,
      'duplicates/': 365,
      'failed/': 365,
      'thumbnails/': 365,
      'exports/': 1,
    });
  });

  it('refuses a rule whose days cannot be resolved, naming it', () => {
    const storage = `Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      LifecycleConfiguration:\n        Rules:\n          - { Id: x, Status: Enabled, Prefix: x/, ExpirationInDays: '\${self:custom.nope.days}' }\n`;

    expect(() => bucketLifecycleRulesFromYaml(storage, 'custom: {}\n')).toThrow(/x\/.*self:custom\.nope\.days/);
  });
});

describe('isExpiredObject', () => {
  it('expires an object as S3 does: its days added to its creation time, rounded up to the next midnight UTC', () => {
    const rule = { prefix: 'exports/', days: 1 };
    const written = new Date(Date.UTC(2026, 0, 10, 15));
    const midnight = Date.UTC(2026, 0, 12);

    expect([
      isExpiredObject(rule, written, written.getTime() + DAY_MS),
      isExpiredObject(rule, written, midnight - 1),
      isExpiredObject(rule, written, midnight),
    ]).toEqual([false, false, true]);
  });
});
