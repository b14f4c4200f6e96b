// Each client's own S3 key on the local S3, scoped as the IAM policy of a client's role is on AWS: write and list under
// uploads/{clientId}/ only. Through the AWS SDK, as a client's program would use it.

import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { statSync } from 'node:fs';
import path from 'node:path';
import {
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutBucketCorsCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { uploadPolicy } from '../../lib/api/uploads';
import { clientS3KeysFile, issueClientS3Key } from '../../local/s3/client-key-ring';
import { type LocalS3, localS3Client, startLocalS3 } from '../../local/s3/s3';
import { tempDataDir, uniqueId } from '../helpers';

let s3: LocalS3;
let dataDir: string;
let operator: S3Client;
let alice: S3Client;
const A = uniqueId('alice');
const B = uniqueId('bob');

const as = (clientId: string): S3Client => {
  const key = issueClientS3Key(dataDir, clientId);
  return localS3Client(s3.url, { credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey }, maxAttempts: 1 });
};

/** The S3 error code a call answers, or 'ok'. */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'ok';
  } catch (err) {
    if (err instanceof S3ServiceException) return `${err.$metadata.httpStatusCode} ${err.name}`;
    throw err;
  }
}

beforeAll(async () => {
  dataDir = tempDataDir('icecat-s3-keys-');
  s3 = await startLocalS3({ host: '127.0.0.1', port: 0, dataDir });
  operator = localS3Client(s3.url);
  alice = as(A);
  await operator.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `uploads/${B}/b1/bob.jpg`, Body: 'bob' }));
  await operator.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `processed/${A}/b1/done.jpg`, Body: 'done' }));
});
afterAll(() => s3.close());

describe("a client's own S3 key", () => {
  it('puts and lists under its own prefix, in one request and in a multipart upload', async () => {
    const put = alice.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `uploads/${A}/b1/cat.jpg`, Body: 'cat' }));
    expect(await outcome(put)).toBe('ok');
    const multipart = new Upload({
      client: alice,
      params: { Bucket: s3.bucket, Key: `uploads/${A}/b1/big.jpg`, Body: Buffer.alloc(6 * 1024 * 1024, 7) },
      partSize: 5 * 1024 * 1024,
    });
    expect(await outcome(multipart.done())).toBe('ok');
    expect(await outcome(alice.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: `uploads/${A}/b1/started.jpg` })))).toBe(
      'ok',
    );
    expect(await outcome(alice.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: `uploads/${B}/b1/started.jpg` })))).toBe(
      '403 AccessDenied',
    );

    const listed = await alice.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `uploads/${A}/` }));

    expect((listed.Contents ?? []).map((o) => o.Key).sort()).toEqual([`uploads/${A}/b1/big.jpg`, `uploads/${A}/b1/cat.jpg`]);
  });

  it("gets 403 AccessDenied on another client's prefix, on reads, deletes, copies and the bucket", async () => {
    const refused = {
      putIntoB: alice.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `uploads/${B}/b1/mine-now.jpg`, Body: 'x' })),
      listB: alice.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `uploads/${B}/` })),
      listAll: alice.send(new ListObjectsV2Command({ Bucket: s3.bucket })),
      listPrefixOfB: alice.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `uploads/${A.slice(0, -1)}` })),
      getProcessed: alice.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `processed/${A}/b1/done.jpg` })),
      getOwnUpload: alice.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `uploads/${A}/b1/cat.jpg` })),
      deleteOwn: alice.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: `uploads/${A}/b1/cat.jpg` })),
      deleteB: alice.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: `uploads/${B}/b1/bob.jpg` })),
      copyFromB: alice.send(
        new CopyObjectCommand({ Bucket: s3.bucket, Key: `uploads/${A}/b1/stolen.jpg`, CopySource: `${s3.bucket}/uploads/${B}/b1/bob.jpg` }),
      ),
      cors: alice.send(
        new PutBucketCorsCommand({
          Bucket: s3.bucket,
          CORSConfiguration: { CORSRules: [{ AllowedMethods: ['GET'], AllowedOrigins: ['*'] }] },
        }),
      ),
    };

    const answers = Object.fromEntries(await Promise.all(Object.entries(refused).map(async ([name, call]) => [name, await outcome(call)])));

    expect(answers).toEqual(Object.fromEntries(Object.keys(refused).map((name) => [name, '403 AccessDenied'])));
    // A HEAD answer has no body to name its code.
    expect(await outcome(alice.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `uploads/${A}/b1/cat.jpg` })))).toMatch(/^403 /);
    expect(await outcome(operator.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `uploads/${B}/b1/bob.jpg` })))).toBe('ok');
    expect(await outcome(operator.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `uploads/${A}/b1/stolen.jpg` })))).toBe(
      '404 NotFound',
    );
  });

  it('is refused on SigV2 requests, which the local S3 would not scope', async () => {
    const { accessKeyId, secretAccessKey } = issueClientS3Key(dataDir, A);
    await alice.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `uploads/${A}/` })); // a SigV4 use first
    const resource = `/${s3.bucket}/uploads/${B}/b1/bob.jpg`;
    const date = new Date().toUTCString();
    const signature = createHmac('sha1', secretAccessKey).update(`GET\n\n\n${date}\n${resource}`).digest('base64');
    const viaHeader = await fetch(`${s3.url}${resource}`, { headers: { authorization: `AWS ${accessKeyId}:${signature}`, date } });
    const expires = Math.floor(Date.now() / 1000) + 300;
    const querySignature = createHmac('sha1', secretAccessKey).update(`GET\n\n\n${expires}\n${resource}`).digest('base64');
    const viaQuery = await fetch(
      `${s3.url}${resource}?AWSAccessKeyId=${accessKeyId}&Expires=${expires}&Signature=${encodeURIComponent(querySignature)}`,
    );

    const answers = await Promise.all([viaHeader, viaQuery].map(async (res) => [res.status, /<Code>([^<]*)</.exec(await res.text())?.[1]]));
    expect(answers).toEqual([
      [403, 'AccessDenied'],
      [403, 'AccessDenied'],
    ]);
  });

  it('may sign a POST form for its own prefix only', async () => {
    const post = async (clientId: string) => {
      const form = await createPresignedPost(
        alice,
        uploadPolicy(s3.bucket, clientId, 'b2', { name: 'f.jpg', contentType: 'image/jpeg', size: 3 }, 300),
      );
      const data = new FormData();
      for (const [name, value] of Object.entries(form.fields)) data.append(name, value);
      data.append('file', new Blob([Buffer.from('cat')], { type: 'image/jpeg' }), 'f.jpg');
      const res = await fetch(`${s3.url}/${s3.bucket}`, { method: 'POST', body: data });
      return `${res.status} ${/<Code>([^<]*)</.exec(await res.text())?.[1] ?? ''}`.trim();
    };

    expect(await post(A)).toBe('204');
    expect(await post(B)).toBe('403 AccessDenied');
  });

  it('leaves the operator key (S3RVER) every right: it reads, lists, copies and deletes anywhere', async () => {
    expect(await outcome(operator.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `uploads/${A}/b1/cat.jpg` })))).toBe('ok');
    expect(await outcome(operator.send(new ListObjectsV2Command({ Bucket: s3.bucket })))).toBe('ok');
    expect(
      await outcome(
        operator.send(
          new CopyObjectCommand({
            Bucket: s3.bucket,
            Key: `processed/${A}/b1/cat.jpg`,
            CopySource: `${s3.bucket}/uploads/${A}/b1/cat.jpg`,
          }),
        ),
      ),
    ).toBe('ok');
    expect(await outcome(operator.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: `uploads/${B}/b1/bob.jpg` })))).toBe('ok');
  });

  it('is printed by `npm run --silent client:s3-keys -- <clientId>` as two lines, kept in the data dir (0600)', () => {
    const C = uniqueId('carol');
    const run = spawnSync('npm', ['run', '--silent', 'client:s3-keys', '--', C], {
      cwd: path.join(__dirname, '..', '..'),
      env: { ...process.env, ICECAT_DATA_DIR: dataDir },
      encoding: 'utf8',
    });

    expect(run.status).toBe(0);
    const key = issueClientS3Key(dataDir, C);
    expect(run.stdout).toBe(`AWS_ACCESS_KEY_ID=${key.accessKeyId}\nAWS_SECRET_ACCESS_KEY=${key.secretAccessKey}\n`);
    expect(key.accessKeyId).toMatch(/^AKIA[A-Z2-7]{16}$/);
    expect(statSync(clientS3KeysFile(dataDir)).mode & 0o777).toBe(0o600);
  });
});
