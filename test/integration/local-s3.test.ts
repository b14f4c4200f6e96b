// The local S3 alone (s3rver behind local/s3/s3.ts): what it refuses, answered as S3's errors through the AWS SDK (and
// plain fetch for POST forms), and that it keeps serving after every refusal or failed write.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createPresignedPost, type PresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Event, SQSEvent } from 'aws-lambda';
import { type DeclaredFile, uploadPolicy } from '../../lib/api/uploads';
import { LOCAL_NAMES } from '../../local/contract';
import { MAX_LAST_SEGMENT_BYTES } from '../../local/s3/object-keys';
import { type LocalS3, localS3Client, startLocalS3 } from '../../local/s3/s3';
import type { Stack } from '../../local/stack/types';
import { startTestStack, tempDataDir, uniqueId } from '../helpers';

let s3: LocalS3;
let client: S3Client;
let dataDir: string;

const clientFor = (endpoint: string, credentials?: { accessKeyId: string; secretAccessKey: string }) =>
  localS3Client(endpoint, credentials ? { credentials } : {});

beforeAll(async () => {
  dataDir = tempDataDir('icecat-s3-');
  s3 = await startLocalS3({ host: '127.0.0.1', port: 0, dataDir });
  client = clientFor(s3.url);
});
afterAll(async () => {
  client.destroy();
  await s3.close();
});

/** After every case: the server still stores and serves objects. */
afterEach(async () => {
  const key = `alive/${uniqueId()}.txt`;
  await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'still here' }));
  const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
  expect(await got.Body?.transformToString()).toBe('still here');
});

/** The S3 error an SDK call ends with: its code (the SDK's `name`) and HTTP status. */
async function s3ErrorOf(call: Promise<unknown>): Promise<{ name: string; status: number | undefined; message: string }> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof S3ServiceException)) throw err;
    return { name: err.name, status: err.$metadata.httpStatusCode, message: err.message };
  }
  throw new Error('the call succeeded');
}

const ENTITIES: Record<string, string> = { quot: '"', apos: "'", amp: '&', lt: '<', gt: '>' };
const xmlText = (raw: string | undefined) => raw?.replace(/&(quot|apos|amp|lt|gt);/g, (_, name: string) => ENTITIES[name] ?? '');

const put = (key: string, body = 'bytes') => client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body }));
const bucketDir = () => path.join(dataDir, 's3', s3.bucket);

describe('keys the local S3 cannot store', () => {
  it('refuses a key over 1024 bytes with KeyTooLongError', async () => {
    const error = await s3ErrorOf(put(`long/${'k'.repeat(1021)}`));

    expect(error).toMatchObject({ name: 'KeyTooLongError', status: 400 });
  });

  it('refuses a 246-byte file name (261 bytes with s3rver suffix) with KeyTooLongError and writes nothing', async () => {
    const folder = uniqueId('name');

    const error = await s3ErrorOf(put(`${folder}/${'n'.repeat(242)}.jpg`));

    expect(error).toMatchObject({ name: 'KeyTooLongError', status: 400 });
    expect(error.message).toMatch(/246 bytes.*233/);
    expect(existsSync(path.join(bucketDir(), folder))).toBe(false);
  });

  it('stores a file name of exactly the longest storable length and refuses one byte more', async () => {
    const longest = `edge/${'e'.repeat(MAX_LAST_SEGMENT_BYTES)}`;

    await put(longest, 'fits');
    const error = await s3ErrorOf(put(`${longest}x`));

    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: longest }));
    expect(await got.Body?.transformToString()).toBe('fits');
    expect(error).toMatchObject({ name: 'KeyTooLongError', status: 400 });
  });

  it('refuses a folder segment over 255 bytes with KeyTooLongError', async () => {
    const error = await s3ErrorOf(put(`${'d'.repeat(256)}/cat.jpg`));

    expect(error).toMatchObject({ name: 'KeyTooLongError', status: 400 });
  });

  it('refuses a key with ".." segments with InvalidArgument and writes nothing outside the bucket', async () => {
    const escapee = uniqueId('escapee');

    const error = await s3ErrorOf(put(`uploads/../../../${escapee}.txt`));

    expect(error).toMatchObject({ name: 'InvalidArgument', status: 400 });
    expect(error.message).toMatch(/"\.\." segment/);
    expect(readdirSync(dataDir, { recursive: true }).some((f) => String(f).includes(escapee))).toBe(false);
    expect(existsSync(path.join(dataDir, '..', `${escapee}.txt._S3rver_object`))).toBe(false);
  });

  it('refuses a key with a leading "/" (an empty segment that would alias another key) with InvalidArgument', async () => {
    const error = await s3ErrorOf(put('/rooted.txt'));

    expect(error).toMatchObject({ name: 'InvalidArgument', status: 400 });
  });

  it('refuses to read, copy from or delete a key with ".." segments', async () => {
    const key = '../s3/icecat-images/anything';
    await put('copy-target-source.txt');

    const read = await s3ErrorOf(client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key })));
    const copied = await s3ErrorOf(
      client.send(new CopyObjectCommand({ Bucket: s3.bucket, Key: 'copy-target.txt', CopySource: `${s3.bucket}/${key}` })),
    );
    const deleted = await s3ErrorOf(client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key })));
    const deletedMany = await s3ErrorOf(client.send(new DeleteObjectsCommand({ Bucket: s3.bucket, Delete: { Objects: [{ Key: key }] } })));

    for (const error of [read, copied, deleted, deletedMany]) expect(error).toMatchObject({ name: 'InvalidArgument', status: 400 });
  });

  it('refuses a multipart upload to a key it cannot store when it starts', async () => {
    const error = await s3ErrorOf(client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: `mp/${'m'.repeat(300)}` })));

    expect(error).toMatchObject({ name: 'KeyTooLongError', status: 400 });
  });

  it('answers NoSuchUpload to a part whose upload id is not one it issued (no path escapes through it)', async () => {
    const error = await s3ErrorOf(
      client.send(new UploadPartCommand({ Bucket: s3.bucket, Key: 'mp/x', UploadId: '../../../outside', PartNumber: 1, Body: 'p' })),
    );

    expect(error).toMatchObject({ name: 'NoSuchUpload', status: 404 });
    expect(existsSync(path.join(dataDir, 'outside'))).toBe(false);
  });

  it('still completes a multipart upload to a storable key', async () => {
    const key = `mp/${uniqueId()}.bin`;
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: key }));
    const part = await client.send(new UploadPartCommand({ Bucket: s3.bucket, Key: key, UploadId, PartNumber: 1, Body: 'one part' }));

    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: s3.bucket,
        Key: key,
        UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
      }),
    );

    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    expect(await got.Body?.transformToString()).toBe('one part');
  });
});

describe('a write the filesystem fails', () => {
  it('answers 500 InternalError for that request only and leaves no object behind', async () => {
    // Arrange: a directory where the object's file must go makes the final rename fail (EISDIR).
    const key = `fault/${uniqueId()}.jpg`;
    mkdirSync(path.join(bucketDir(), `${key}._S3rver_object`), { recursive: true });

    // Act
    const error = await s3ErrorOf(put(key, 'x'.repeat(100_000)));

    // Assert
    expect(error).toMatchObject({ name: 'InternalError', status: 500 });
    expect(readdirSync(path.join(bucketDir(), 'fault')).filter((f) => /\._S3rver_object\.[0-9a-f]{6}$/.test(f))).toEqual([]);
  });
});

describe('files torn by a killed process, and deletes racing in one folder', () => {
  const file = (key: string, resource: string) => path.join(bucketDir(), `${key}._S3rver_${resource}`);
  const md5 = (body: string) => `"${createHash('md5').update(body).digest('hex')}"`;

  it('deletes the objects of a folder all at once, each answered 204 with no retry, and removes the emptied folders', async () => {
    const once = localS3Client(s3.url, { maxAttempts: 1 });
    const root = `race/${uniqueId()}`;
    const keys = Array.from({ length: 10 }, (_, folder) =>
      ['a.png', 'b.png', 'c.png'].map((name) => `${root}/day${folder}/${name}`),
    ).flat();
    await Promise.all(keys.map((key) => put(key, 'x')));

    const deleted = await Promise.allSettled(keys.map((key) => once.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }))));
    once.destroy();

    expect(deleted.filter((d) => d.status === 'rejected')).toEqual([]);
    expect(existsSync(path.join(bucketDir(), root))).toBe(false);
  });

  it('writes into a folder while the delete of its last object removes the emptied folders, every write answered with no retry', async () => {
    // Each round: the folder holds one object; it is deleted while the next is written beside it.
    const once = localS3Client(s3.url, { maxAttempts: 1 });
    const root = `comeback/${uniqueId()}`;
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async (_, writer) => {
        const folder = `${root}/w${writer}/a/b`;
        await put(`${folder}/0.png`, 'x');
        for (let round = 1; round <= 150; round++) {
          await Promise.all([
            once.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: `${folder}/${round - 1}.png` })),
            once.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${folder}/${round}.png`, Body: 'x' })).catch((err: Error) => {
              failures.push(`${err.name}: ${err.message}`);
              return put(`${folder}/${round}.png`, 'x');
            }),
          ]);
        }
      }),
    );
    once.destroy();

    expect(failures).toEqual([]);
  });

  it('lists a prefix while folders under it come and go (each write its own folder, then deleted), every listing answered with no retry', async () => {
    const once = localS3Client(s3.url, { maxAttempts: 1 });
    const prefix = `busy/${uniqueId()}`;
    let listings = 0;
    const failures: string[] = [];
    const writers = Array.from({ length: 4 }, async (_, writer) => {
      for (let round = 0; listings < 1000; round++) {
        const key = `${prefix}/w${writer}-${round}/a.png`;
        await put(key, 'x');
        await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
      }
    });
    const listers = Array.from({ length: 4 }, async () => {
      while (listings < 1000) {
        listings++;
        await once
          .send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}/` }))
          .catch((err: Error) => failures.push(err.name));
      }
    });

    await Promise.all([...writers, ...listers]);
    once.destroy();

    expect(failures).toEqual([]);
  });

  it('lists and serves an object whose metadata file is torn, with default metadata, and heals the file', async () => {
    const key = `torn/${uniqueId()}/cat.png`;
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'pixels', ContentType: 'image/png' }));
    writeFileSync(file(key, 'metadata.json'), '{"content-ty');

    const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: path.posix.dirname(key) + '/' }));
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));

    expect(listed.Contents?.map((o) => o.Key)).toEqual([key]);
    expect(await got.Body?.transformToString()).toBe('pixels');
    expect([got.ContentType, got.ETag]).toEqual(['binary/octet-stream', md5('pixels')]);
    expect(existsSync(file(key, 'metadata.json'))).toBe(false);
  });

  it('answers the ETag of the content when the checksum file is torn', async () => {
    const key = `torn/${uniqueId()}/cat.png`;
    await put(key, 'pixels');
    writeFileSync(file(key, 'object.md5'), 'd41d8');

    const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }));

    expect(head.ETag).toBe(md5('pixels'));
  });

  it("copies onto an existing key through temporary files: the copy keeps the source's type, and none is left", async () => {
    const folder = `copy/${uniqueId()}`;
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${folder}/src.png`, Body: 'new pixels', ContentType: 'image/png' }));
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${folder}/dest.png`, Body: 'old', ContentType: 'text/plain' }));

    await client.send(
      new CopyObjectCommand({ Bucket: s3.bucket, Key: `${folder}/dest.png`, CopySource: `${s3.bucket}/${folder}/src.png` }),
    );
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${folder}/dest.png` }));

    expect(await got.Body?.transformToString()).toBe('new pixels');
    expect([got.ContentType, got.ETag]).toEqual(['image/png', md5('new pixels')]);
    expect(readdirSync(path.join(bucketDir(), folder)).filter((f) => /\.tmp-|\.[0-9a-f]{6}$/.test(f))).toEqual([]);
  });
});

describe('conditional requests', () => {
  let key: string;
  let eTag: string;
  beforeEach(async () => {
    key = `cond/${uniqueId()}.jpg`;
    eTag = (await put(key, 'original')).ETag ?? '';
  });

  it('returns the ETag on GetObject and HeadObject', async () => {
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    await got.Body?.transformToString();
    const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }));

    expect(eTag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(got.ETag).toBe(eTag);
    expect(head.ETag).toBe(eTag);
  });

  it('refuses DeleteObject with PreconditionFailed when If-Match names another ETag, and keeps the object', async () => {
    const error = await s3ErrorOf(
      client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key, IfMatch: '"0123456789abcdef0123456789abcdef"' })),
    );

    expect(error).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }));
    expect(head.ETag).toBe(eTag);
  });

  it('deletes with 204 when If-Match names the stored ETag', async () => {
    const deleted = await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key, IfMatch: eTag }));

    expect(deleted.$metadata.httpStatusCode).toBe(204);
    const error = await s3ErrorOf(client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key })));
    expect(error).toMatchObject({ name: 'NoSuchKey', status: 404 });
  });

  it('answers NoSuchKey to a DeleteObject with If-Match on a missing object', async () => {
    const error = await s3ErrorOf(client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: `${key}.missing`, IfMatch: eTag })));

    expect(error).toMatchObject({ name: 'NoSuchKey', status: 404 });
  });

  it('refuses DeleteObject If-Match after an overwrite changed the ETag', async () => {
    await put(key, 'overwritten');

    const error = await s3ErrorOf(client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key, IfMatch: eTag })));

    expect(error).toMatchObject({ name: 'PreconditionFailed', status: 412 });
  });

  it('refuses CopyObject with PreconditionFailed when x-amz-copy-source-if-match names another ETag', async () => {
    await put(key, 'overwritten');

    const error = await s3ErrorOf(
      client.send(
        new CopyObjectCommand({ Bucket: s3.bucket, Key: `${key}.copy`, CopySource: `${s3.bucket}/${key}`, CopySourceIfMatch: eTag }),
      ),
    );

    expect(error).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    const missing = await s3ErrorOf(client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `${key}.copy` })));
    expect(missing.status).toBe(404);
  });

  it('copies when x-amz-copy-source-if-match names the source ETag', async () => {
    const copied = await client.send(
      new CopyObjectCommand({
        Bucket: s3.bucket,
        Key: `${key}.copy`,
        CopySource: `${s3.bucket}/${encodeURIComponent(key)}`,
        CopySourceIfMatch: eTag,
      }),
    );

    expect(copied.CopyObjectResult?.ETag).toBe(eTag);
  });

  it('refuses GetObject with PreconditionFailed when If-Match names another ETag', async () => {
    const error = await s3ErrorOf(
      client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key, IfMatch: '"ffffffffffffffffffffffffffffffff"' })),
    );

    expect(error).toMatchObject({ name: 'PreconditionFailed', status: 412 });
  });

  it('refuses PutObject If-None-Match "*" on an existing key with PreconditionFailed, and accepts it on a free key', async () => {
    const error = await s3ErrorOf(client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'again', IfNoneMatch: '*' })));
    const created = await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${key}.new`, Body: 'new', IfNoneMatch: '*' }));

    expect(error).toMatchObject({ name: 'PreconditionFailed', status: 412 });
    expect(created.ETag).toMatch(/^"[0-9a-f]{32}"$/);
  });
});

describe('requests without a valid signature', () => {
  const KEY = 'signed-only/photo.jpg';
  beforeAll(async () => {
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: KEY, Body: 'private bytes' }));
  });
  /** An unsigned request, as any local process or a web page (no preflight for text/plain) can send. */
  const anonymous = async (method: string, pathAndQuery: string, init: RequestInit = {}) => {
    const res = await fetch(`${s3.url}/${s3.bucket}${pathAndQuery}`, { method, ...init });
    const text = await res.text();
    return { status: res.status, code: /<Code>([^<]*)<\/Code>/.exec(text)?.[1] };
  };

  it.each([
    ['lists the bucket', 'GET', ''],
    ['lists with ListObjectsV2', 'GET', '?list-type=2&prefix=signed-only/'],
    ['reads an object', 'GET', `/${KEY}`],
    ['heads an object', 'HEAD', `/${KEY}`],
    ['writes an object', 'PUT', '/signed-only/planted.txt'],
    ['deletes an object', 'DELETE', `/${KEY}`],
    ['copies an object', 'PUT', '/signed-only/copy.jpg'],
  ])('refuses an unsigned request that %s with 403 AccessDenied', async (_, method, pathAndQuery) => {
    const init: RequestInit = method === 'PUT' ? { body: 'x', headers: { 'x-amz-copy-source': `/${s3.bucket}/${KEY}` } } : {};

    const res = await anonymous(method, pathAndQuery, init);

    expect(res.status).toBe(403);
    if (method !== 'HEAD') expect(res.code).toBe('AccessDenied');
  });

  it('refuses the text/plain POST ?delete a web page can send without a preflight, and deletes nothing', async () => {
    const body = `<Delete><Object><Key>${KEY}</Key></Object></Delete>`;

    const res = await anonymous('POST', '?delete', { body, headers: { 'content-type': 'text/plain' } });

    expect([res.status, res.code]).toEqual([403, 'AccessDenied']);
    const kept = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: KEY }));
    expect(await kept.Body?.transformToString()).toBe('private bytes');
  });

  it('refuses a request signed (SigV4) with the right access key and another secret with SignatureDoesNotMatch', async () => {
    const forger = clientFor(s3.url, { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: 'not-the-secret' });

    const errors = await Promise.all([
      s3ErrorOf(forger.send(new GetObjectCommand({ Bucket: s3.bucket, Key: KEY }))),
      s3ErrorOf(forger.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'signed-only/' }))),
      s3ErrorOf(forger.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: KEY }))),
    ]);
    forger.destroy();

    expect(errors.map((e) => [e.name, e.status])).toEqual(Array(3).fill(['SignatureDoesNotMatch', 403]));
    expect((await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: KEY }))).ContentLength).toBe('private bytes'.length);
  });

  it('refuses a signed request whose signed parts were changed on the way (another key than signed)', async () => {
    const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: s3.bucket, Key: KEY }), { expiresIn: 300 });
    const other = url.replace('/photo.jpg?', '/other.jpg?');

    const res = await fetch(other);

    expect(res.status).toBe(403);
    expect(await res.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
  });

  it('serves a presigned GET URL, and refuses it once expired with AccessDenied', async () => {
    const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: s3.bucket, Key: KEY }), { expiresIn: 300 });
    const expired = await getSignedUrl(client, new GetObjectCommand({ Bucket: s3.bucket, Key: KEY }), {
      expiresIn: 1,
      signingDate: new Date(Date.now() - 60_000),
    });

    const ok = await fetch(url);
    const late = await fetch(expired);

    expect([ok.status, await ok.text()]).toEqual([200, 'private bytes']);
    expect(late.status).toBe(403);
    expect(await late.text()).toMatch(/<Code>AccessDenied<\/Code>.*Request has expired/s);
  });
});

describe('presigned POST forms', () => {
  const IMAGE = Buffer.from('not really a jpeg, but bytes of the declared size');
  const FILE: DeclaredFile = { name: 'holiday/cat 1.jpg', contentType: 'image/jpeg', size: IMAGE.length };

  const formFor = (file: DeclaredFile = FILE, expiresSeconds = 300, signer = client, bucket = s3.bucket): Promise<PresignedPost> =>
    createPresignedPost(signer, uploadPolicy(bucket, 'demo', uniqueId('b'), file, expiresSeconds));

  /** Posts the form as a browser does (fields, then the file) and reads S3's XML error, if any. */
  async function post(form: PresignedPost, body: Buffer, opts: { fields?: Record<string, string>; contentType?: string } = {}) {
    const data = new FormData();
    for (const [name, value] of Object.entries({ ...form.fields, ...opts.fields })) data.append(name, value);
    data.append('file', new Blob([body], { type: opts.contentType ?? 'image/jpeg' }), 'cat.jpg');
    const res = await fetch(`${s3.url}/${s3.bucket}`, { method: 'POST', body: data });
    const text = await res.text();
    const element = (name: string) => xmlText(new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1]);
    return { status: res.status, code: element('Code'), message: element('Message'), text };
  }

  it('stores the file of a form created by the API, under its key, with its content type', async () => {
    const form = await formFor();

    const res = await post(form, IMAGE);

    expect(res.status).toBe(204);
    const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: form.fields.key }));
    expect(head).toMatchObject({ ContentType: 'image/jpeg', ContentLength: IMAGE.length });
  });

  it('refuses another key with AccessDenied (Invalid according to Policy) and stores nothing', async () => {
    const form = await formFor();
    const otherKey = form.fields.key?.replace('cat 1.jpg', 'other.jpg') ?? '';

    const res = await post(form, IMAGE, { fields: { key: otherKey } });

    expect(res).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(res.message).toMatch(/^Invalid according to Policy: Policy Condition failed: \["eq", "\$key", /);
    const missing = await s3ErrorOf(client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: otherKey })));
    expect(missing.status).toBe(404);
  });

  it('refuses a file over the declared size with EntityTooLarge', async () => {
    const form = await formFor();

    const res = await post(form, Buffer.concat([IMAGE, Buffer.from('!')]));

    expect(res).toMatchObject({ status: 400, code: 'EntityTooLarge' });
    expect(res.text).toContain(`<MaxSizeAllowed>${IMAGE.length}</MaxSizeAllowed>`);
  });

  it('refuses an empty file with EntityTooSmall', async () => {
    const res = await post(await formFor(), Buffer.alloc(0));

    expect(res).toMatchObject({ status: 400, code: 'EntityTooSmall' });
  });

  it('refuses another Content-Type than the declared one with AccessDenied', async () => {
    const res = await post(await formFor(), IMAGE, { fields: { 'Content-Type': 'image/png' } });

    expect(res).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(res.message).toContain('"$Content-Type"');
  });

  it('refuses a non-image Content-Type (the starts-with condition) with AccessDenied', async () => {
    const form = await formFor({ ...FILE, contentType: 'text/html' });

    const res = await post(form, IMAGE, { contentType: 'text/html' });

    expect(res).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(res.message).toBe('Invalid according to Policy: Policy Condition failed: ["starts-with", "$Content-Type", "image/"]');
  });

  it('refuses an expired form with AccessDenied (Policy expired)', async () => {
    const res = await post(await formFor(FILE, -1), IMAGE);

    expect(res).toMatchObject({ status: 403, code: 'AccessDenied', message: 'Invalid according to Policy: Policy expired.' });
  });

  it('refuses a form whose policy was altered after signing with SignatureDoesNotMatch', async () => {
    const form = await formFor();
    const policy = JSON.parse(Buffer.from(form.fields.Policy ?? '', 'base64').toString('utf8')) as { conditions: unknown[] };
    policy.conditions = policy.conditions.map((c) => (Array.isArray(c) && c[0] === 'content-length-range' ? [c[0], 1, 10 ** 9] : c));
    const altered = Buffer.from(JSON.stringify(policy)).toString('base64');

    const res = await post(form, IMAGE, { fields: { Policy: altered } });

    expect(res).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
  });

  it('refuses a form signed with another secret with SignatureDoesNotMatch', async () => {
    const forger = clientFor(s3.url, { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: 'not-the-secret' });

    const res = await post(await formFor(FILE, 300, forger), IMAGE);

    expect(res).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
  });

  it('refuses a form signed with an unknown access key with InvalidAccessKeyId', async () => {
    const stranger = clientFor(s3.url, { accessKeyId: 'AKIDSTRANGER', secretAccessKey: LOCAL_NAMES.secretAccessKey });

    const res = await post(await formFor(FILE, 300, stranger), IMAGE);

    expect(res).toMatchObject({ status: 403, code: 'InvalidAccessKeyId' });
  });

  it('refuses a form made for another bucket with AccessDenied', async () => {
    const res = await post(await formFor(FILE, 300, client, 'another-bucket'), IMAGE);

    expect(res).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(res.message).toContain('"$bucket"');
  });

  it('refuses a field the policy does not name with AccessDenied (Extra input fields)', async () => {
    const res = await post(await formFor(), IMAGE, { fields: { 'x-amz-meta-owner': 'mallory' } });

    expect(res).toMatchObject({
      status: 403,
      code: 'AccessDenied',
      message: 'Invalid according to Policy: Extra input fields: x-amz-meta-owner',
    });
  });

  it('refuses a form without a policy (an anonymous upload) with AccessDenied', async () => {
    const data = new FormData();
    data.append('key', 'anonymous.jpg');
    data.append('file', new Blob([IMAGE]), 'cat.jpg');

    const res = await fetch(`${s3.url}/${s3.bucket}`, { method: 'POST', body: data });

    expect(res.status).toBe(403);
    expect(await res.text()).toContain('<Code>AccessDenied</Code>');
  });

  it('refuses a form that repeats a field (a second key after the signed one) with InvalidArgument, storing under neither', async () => {
    const form = await formFor();
    const otherKey = `${form.fields.key}.elsewhere.jpg`;
    const data = new FormData();
    for (const [name, value] of Object.entries(form.fields)) data.append(name, value);
    data.append('key', otherKey);
    data.append('file', new Blob([IMAGE], { type: 'image/jpeg' }), 'cat.jpg');

    const res = await fetch(`${s3.url}/${s3.bucket}`, { method: 'POST', body: data });
    const text = await res.text();

    expect([res.status, /<Code>([^<]*)<\/Code>/.exec(text)?.[1], /<ArgumentName>([^<]*)</.exec(text)?.[1]]).toEqual([
      400,
      'InvalidArgument',
      'key',
    ]);
    for (const key of [form.fields.key!, otherKey]) {
      expect((await s3ErrorOf(client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key })))).status).toBe(404);
    }
  });

  it('answers KeyTooLongError to a valid form whose key has a file name the local S3 cannot store', async () => {
    const res = await post(await formFor({ ...FILE, name: `${'n'.repeat(250)}.jpg` }), IMAGE);

    expect(res).toMatchObject({ status: 400, code: 'KeyTooLongError' });
  });
});

describe('the whole local stack, given names the local S3 cannot store', () => {
  let stack: Stack;
  let stackClient: S3Client;
  const delivered: string[] = [];
  beforeAll(async () => {
    stack = await startTestStack({
      ingestHandler: async (event: SQSEvent) => {
        for (const record of event.Records) {
          for (const s3Record of (JSON.parse(record.body) as S3Event).Records)
            delivered.push(decodeURIComponent(s3Record.s3.object.key.replace(/\+/g, ' ')));
        }
        return { batchItemFailures: [] };
      },
    });
    stackClient = clientFor(stack.endpoints.s3);
  });
  afterAll(async () => {
    stackClient.destroy();
    await stack.stop();
  });

  it('answers a 1,000-byte file name with KeyTooLongError to the uploader, and keeps delivering the next upload', async () => {
    // Arrange
    const batch = uniqueId('b');
    const longName = `${'n'.repeat(996)}.jpg`;
    const form = await createPresignedPost(
      stackClient,
      uploadPolicy(stack.bucket, 'demo', batch, { name: `${'p'.repeat(246)}.jpg`, contentType: 'image/jpeg', size: 5 }, 300),
    );
    const data = new FormData();
    for (const [name, value] of Object.entries(form.fields)) data.append(name, value);
    data.append('file', new Blob([Buffer.from('bytes')], { type: 'image/jpeg' }), 'cat.jpg');

    // Act
    const put = await s3ErrorOf(
      stackClient.send(new PutObjectCommand({ Bucket: stack.bucket, Key: `uploads/demo/${batch}/${longName}`, Body: 'bytes' })),
    );
    const posted = await fetch(form.url, { method: 'POST', body: data });
    const postedBody = await posted.text();
    const escaping = await s3ErrorOf(
      stackClient.send(new PutObjectCommand({ Bucket: stack.bucket, Key: `uploads/demo/${batch}/../../../../outside.jpg`, Body: 'bytes' })),
    );
    const fine = `uploads/demo/${batch}/fine.jpg`;
    await stackClient.send(new PutObjectCommand({ Bucket: stack.bucket, Key: fine, Body: 'bytes' }));
    await stack.whenIdle(10_000);

    // Assert
    expect(put).toMatchObject({ name: 'KeyTooLongError', status: 400 });
    expect(posted.status).toBe(400);
    expect(postedBody).toContain('<Code>KeyTooLongError</Code>');
    expect(escaping).toMatchObject({ name: 'InvalidArgument', status: 400 });
    expect(delivered.filter((key) => key.includes(batch))).toEqual([fine]);
  });
});
