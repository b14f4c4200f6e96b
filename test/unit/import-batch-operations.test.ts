// An import's S3 Batch Operations side (docs/decisions/0042), its pure parts: the task's reading of the invocation
// (AWS's documented schema 2.0 event, events/), the answer Batch Operations expects, and the CreateJob input.
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { RequestThrottled } from '@aws-sdk/client-sqs';
import { s3BatchInvocationEvent, s3BatchResponseExample } from '../../events/s3-batch-operations';
import { type BatchOperationsSettings, createJobInput, jobToken, manifestFormat, manifestObject } from '../../lib/import/batch-operations';
import {
  answerInvocation,
  decodeTaskKey,
  isRetryableFault,
  jobArguments,
  type TaskDeps,
  taskObject,
} from '../../lib/import/batch-operations-task';

const untouched: TaskDeps = {
  queue: { send: () => Promise.reject(new Error('no send expected')) },
  marks: { begin: () => Promise.reject(new Error('no mark expected')), sent: () => Promise.reject(new Error('no mark expected')) },
  quota: {
    limitsOf: () => Promise.reject(new Error('no quota expected')),
    countUpload: () => Promise.reject(new Error('no quota expected')),
  },
  progress: {
    countObject: () => Promise.reject(new Error('no count expected')),
    waitForQuota: () => Promise.reject(new Error('no wait expected')),
  },
};
const ARGS = { clientId: 'acme', batchId: 'lib-2026', expiresAt: '1893456000', allow: '["s3://acme-photos/2024/"]' };

describe("the task's reading of a Batch Operations invocation", () => {
  it("answers AWS's documented schema 2.0 event in the documented response's shape, each task PermanentFailure for its foreign userArguments", async () => {
    // Arrange
    const event = s3BatchInvocationEvent();
    const documented = s3BatchResponseExample();

    // Act
    const answer = await answerInvocation(untouched, event);

    // Assert
    expect(Object.keys(answer).sort()).toEqual(Object.keys(documented).sort());
    expect(answer.results.map((r) => Object.keys(r).sort())).toEqual(documented.results.map((r) => Object.keys(r).sort()));
    expect([answer.invocationSchemaVersion, answer.invocationId]).toEqual(['2.0', event.invocationId]);
    expect(answer.results).toEqual([
      {
        taskId: event.tasks[0]!.taskId,
        resultCode: 'PermanentFailure',
        resultString: expect.stringMatching(/^InvalidJob: userArguments.clientId/),
      },
    ]);
  });

  it('refuses a schema 1.0 job (no userArguments) task by task, and throws on what is no invocation at all', async () => {
    const v1 = { ...s3BatchInvocationEvent(), invocationSchemaVersion: '1.0' };

    const answer = await answerInvocation(untouched, v1);

    expect(answer.results.map((r) => [r.resultCode, r.resultString])).toEqual([
      ['PermanentFailure', expect.stringMatching(/^InvalidJob: invocationSchemaVersion 1\.0: the job must invoke with 2\.0/)],
    ]);
    await expect(answerInvocation(untouched, { tasks: [] })).rejects.toThrow(/not an S3 Batch Operations invocation/);
  });

  it.each([
    [{ ...ARGS, clientId: 'ac me' }, /clientId/],
    [{ ...ARGS, batchId: '' }, /batchId/],
    [{ ...ARGS, expiresAt: 'soon' }, /expiresAt/],
    [{ ...ARGS, allow: '["https://x/"]' }, /allow/],
    [{ ...ARGS, allow: '' }, /allow/],
  ])('refuses job arguments %j', (args, message) => {
    expect(jobArguments(args)).toEqual(expect.stringMatching(message));
  });

  it('reads valid job arguments as the batch and its allowed prefixes', () => {
    expect(jobArguments(ARGS)).toEqual({
      target: { clientId: 'acme', batchId: 'lib-2026', expiresAt: 1893456000 },
      allow: [{ bucket: 'acme-photos', prefix: '2024/' }],
    });
  });

  it.each([
    ['cat+1.jpg', 'cat 1.jpg'],
    ['cat%2B1.jpg', 'cat+1.jpg'],
    ['caf%C3%A9/%E7%8C%AB.png', 'café/猫.png'],
    ['100%.jpg', undefined],
  ])('decodes the key %s as %s', (encoded, key) => {
    expect(decodeTaskKey(encoded)).toBe(key);
  });

  it("takes a task's object only inside the allowed prefixes, by bucket name (2.0) or ARN (1.0), version kept", () => {
    const allow = [{ bucket: 'acme-photos', prefix: '2024/' }];
    const task = { taskId: 't', s3Key: '2024/a+b.jpg', s3VersionId: 'v1', s3Bucket: 'acme-photos' };

    expect(taskObject(task, allow)).toEqual({ bucket: 'acme-photos', key: '2024/a b.jpg', versionId: 'v1' });
    expect(taskObject({ ...task, s3Bucket: undefined, s3BucketArn: 'arn:aws:s3:::acme-photos' }, allow)).toMatchObject({
      key: '2024/a b.jpg',
    });
    expect(taskObject({ ...task, s3Key: '2023/a.jpg' }, allow)).toMatch(/outside the batch's source/);
    expect(taskObject({ ...task, s3Bucket: 'other' }, allow)).toMatch(/outside the batch's source/);
    expect(taskObject({ ...task, s3Key: 'x'.repeat(1025) }, [{ bucket: 'acme-photos', prefix: '' }])).toMatch(/1,024 bytes/);
  });

  it('tells throttling and transient faults, which are redriven, from the rest', () => {
    const throttled = new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} });
    const sqsThrottled = new RequestThrottled({ message: 'slow down', $metadata: {} });
    const serverSide = Object.assign(new Error('oops'), { name: 'InternalFailure', $metadata: { httpStatusCode: 500 } });
    const denied = Object.assign(new Error('no'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } });

    expect([throttled, sqsThrottled, serverSide, denied].map(isRetryableFault)).toEqual(['throttled', 'throttled', 'transient', false]);
  });
});

describe("an import's CreateJob input", () => {
  const settings: BatchOperationsSettings = {
    accountId: '123456789012',
    taskFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:icecat-wrangler-dev-importTask',
    jobRoleArn: 'arn:aws:iam::123456789012:role/icecat-import-job',
    reportBucket: 'icecat-images',
    priority: 10,
  };
  const job = { clientId: 'acme', batchId: 'lib-2026', expiresAt: 1893456000, allow: ['s3://acme-photos/2024/'] };

  it('lists a bucket and prefix by the generated manifest, invokes the task with schema 2.0 and the batch as UserArguments, and reports every task', () => {
    const input = createJobInput(settings, { ...job, source: { bucket: 'acme-photos', prefix: '2024/' } });

    expect(input).toMatchObject({
      AccountId: '123456789012',
      ConfirmationRequired: false,
      Priority: 10,
      RoleArn: settings.jobRoleArn,
      Operation: {
        LambdaInvoke: { FunctionArn: settings.taskFunctionArn, InvocationSchemaVersion: '2.0', UserArguments: ARGS },
      },
      ManifestGenerator: {
        S3JobManifestGenerator: {
          SourceBucket: 'arn:aws:s3:::acme-photos',
          EnableManifestOutput: false,
          Filter: { KeyNameConstraint: { MatchAnyPrefix: ['2024/'] } },
        },
      },
      Report: {
        Enabled: true,
        Bucket: 'arn:aws:s3:::icecat-images',
        Prefix: 'imports/acme/lib-2026',
        Format: 'Report_CSV_20180820',
        ReportScope: 'AllTasks',
      },
    });
    expect(input.Manifest).toBeUndefined();
  });

  it("reads a client's manifest as Batch Operations' CSV (2 or 3 columns) or an Inventory manifest.json, by its ETag", () => {
    const csv = createJobInput(
      settings,
      { ...job, source: { manifest: 's3://acme-photos/m.csv' } },
      { bucket: 'acme-photos', key: 'm.csv', etag: 'e1', format: 'csv3' },
    );
    const inventory = createJobInput(
      settings,
      { ...job, source: { manifest: 's3://inv/acme/manifest.json' } },
      { bucket: 'inv', key: 'acme/manifest.json', etag: 'e2', format: 'inventory' },
    );

    expect(csv.Manifest).toEqual({
      Spec: { Format: 'S3BatchOperations_CSV_20180820', Fields: ['Bucket', 'Key', 'VersionId'] },
      Location: { ObjectArn: 'arn:aws:s3:::acme-photos/m.csv', ETag: 'e1' },
    });
    expect(inventory.Manifest?.Spec).toEqual({ Format: 'S3InventoryReport_CSV_20161130' });
    expect([manifestFormat('m.csv', 'b,k'), manifestFormat('m.csv', 'b,k,v\r'), manifestFormat('x/manifest.json', '{')]).toEqual([
      'csv2',
      'csv3',
      'inventory',
    ]);
    expect(() => manifestFormat('m.csv', 'b')).toThrow(/1 columns/);
    expect(() => manifestObject('s3://acme-photos/')).toThrow(/not the s3:\/\/bucket\/key/);
  });

  it('makes one job per batch and attempt (the idempotency token), and refuses allowed sources longer than a job argument holds', () => {
    expect(jobToken(job)).toBe(jobToken({ ...job, attempt: 1 }));
    expect(jobToken({ ...job, attempt: 2 })).not.toBe(jobToken(job));
    expect(jobToken(job)).toMatch(/^[0-9a-f]{64}$/);
    const many = Array.from({ length: 40 }, (_, i) => `s3://acme-photos/${'p'.repeat(20)}${i}/`);
    expect(() => createJobInput(settings, { ...job, allow: many, source: { bucket: 'acme-photos', prefix: '' } })).toThrow(/1024/);
  });
});
