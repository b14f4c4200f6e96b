// The tenant boundary of the local S3 (issue 37): a form the API handed client A, sent unchanged plus smuggled parts,
// writes nothing outside A's own key; and a multipart upload is bound to the key it was started for, so another
// client's UploadId cannot be completed (or fed parts) through one's own prefix. Over loopback, as a client would.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { UploadForm } from '../../lib/api/schemas/batches';
import { presignUploads } from '../../lib/api/uploads';
import { issueClientS3Key } from '../../local/s3/client-key-ring';
import { type LocalS3, localS3Client, startLocalS3 } from '../../local/s3/s3';
import { tempDataDir, uniqueId } from '../helpers';

let s3: LocalS3;
let dataDir: string;
let operator: S3Client;
const A = uniqueId('alice');
const B = uniqueId('bob');
const CAT = Buffer.from('JPEG-of-a-cat');

beforeAll(async () => {
  dataDir = tempDataDir('icecat-s3-boundary-');
  s3 = await startLocalS3({ host: '127.0.0.1', port: 0, dataDir });
  operator = localS3Client(s3.url);
});
afterAll(() => s3.close());

/** Every key stored under a prefix (read with the operator's key). */
async function keysUnder(prefix: string): Promise<string[]> {
  const listed = await operator.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
  return (listed.Contents ?? []).map((o) => o.Key ?? '');
}

/** A form for client A's batch, signed as the API signs it (the stack's own S3 client). */
async function formForA(batch: string): Promise<UploadForm> {
  const [form] = await presignUploads(operator, s3.bucket, A, batch, [{ name: 'cat.jpg', contentType: 'image/jpeg', size: 100 }], 300);
  return form!;
}

const part = (boundary: string, disposition: string, value: string | Buffer, extra = ''): Buffer =>
  Buffer.concat([Buffer.from(`--${boundary}\r\n${disposition}\r\n${extra}\r\n`), Buffer.from(value), Buffer.from('\r\n')]);
const field = (boundary: string, name: string, value: string) => part(boundary, `Content-Disposition: form-data; name="${name}"`, value);
const filePart = (boundary: string) =>
  part(boundary, 'Content-Disposition: form-data; name="file"; filename="cat.jpg"', CAT, 'Content-Type: image/jpeg\r\n');

interface Smuggle {
  name: string;
  /** The raw form: A's fields unchanged, plus what the smuggler adds, and its Content-Type. */
  body(form: UploadForm, target: string): { body: Buffer; contentType: string };
}

const BOUNDARY = 'smuggler-boundary';
const aFields = (form: UploadForm, boundary = BOUNDARY) => Object.entries(form.fields).map(([n, v]) => field(boundary, n, v));
/** A's fields, a decoy part the guard took for the file, a second `key`, then the file. */
const decoy = (name: string, disposition: string): Smuggle => ({
  name,
  body: (form, target) => ({
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    body: Buffer.concat([
      ...aFields(form),
      part(BOUNDARY, disposition, 'decoy'),
      field(BOUNDARY, 'key', target),
      filePart(BOUNDARY),
      Buffer.from(`--${BOUNDARY}--\r\n`),
    ]),
  }),
});

const SMUGGLES: Smuggle[] = [
  decoy('a backslash in a quoted name (fi\\le)', 'Content-Disposition: form-data; name="fi\\le"; filename="x.jpg"'),
  decoy('a backslash before the first letter (\\file)', 'Content-Disposition: form-data; name="\\file"'),
  decoy('a space before the header colon', 'Content-Disposition : form-data; name="file"; filename="x.jpg"'),
  decoy('a Content-Disposition without a space around ;', 'Content-Disposition:form-data;name="fi\\le";filename="x.jpg"'),
  {
    name: 'a folded header line naming the part `key`',
    body: (form, target) => ({
      contentType: `multipart/form-data; boundary=${BOUNDARY}`,
      body: Buffer.concat([
        ...aFields(form),
        part(BOUNDARY, 'Content-Disposition: form-data; name="file"\r\n\tX-Fold: ;name="key"', target),
        filePart(BOUNDARY),
        Buffer.from(`--${BOUNDARY}--\r\n`),
      ]),
    }),
  },
  {
    name: 'two boundaries in the Content-Type, one hidden in a quoted parameter',
    body: (form, target) => {
      const seen = 'seen"'; // what a regex finds first: `; boundary=seen"` inside x="…"
      const real = 'real-boundary';
      return {
        contentType: `multipart/form-data; x="; boundary=${seen}; boundary=${real}`,
        body: Buffer.concat([
          ...aFields(form, seen),
          filePart(seen),
          Buffer.from('\r\n'),
          field(real, 'key', target),
          filePart(real),
          Buffer.from(`--${real}--\r\n`),
        ]),
      };
    },
  },
];

async function post(body: Buffer, contentType: string): Promise<string> {
  const res = await fetch(`${s3.url}/${s3.bucket}`, {
    method: 'POST',
    body: new Uint8Array(body),
    headers: { 'content-type': contentType },
  });
  return `${res.status} ${/<Code>([^<]*)</.exec(await res.text())?.[1] ?? ''}`.trim();
}

/** Decoy part headers a parser could read as the file's, or as no part at all, combined at random (seeded). */
function fuzzedDecoys(count: number): string[] {
  let seed = 37;
  const pick = <T>(options: readonly T[]): T => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return options[(seed >>> 8) % options.length]!;
  };
  const headerNames = [
    'Content-Disposition',
    'content-disposition',
    'Content-Disposition ',
    'Content-Disposition\t',
    ' Content-Disposition',
  ];
  const names = [
    '"fi\\le"',
    '"\\file"',
    '"fil\\e"',
    'fi le',
    '"FILE"',
    'file',
    '"file" ',
    '"fi"le',
    '"file"; name*=utf-8\'\'x',
    '"file"; name="x"',
  ];
  const tails = ['', '; filename="x.jpg"', "; filename*=utf-8''x.jpg", '; filename="a\\"b.jpg"', ';filename=x.jpg'];
  const types = ['form-data', 'Form-Data', 'form-data ', 'attachment'];
  return Array.from(
    { length: count },
    () => `${pick(headerNames)}:${pick([' ', '', '\t'])}${pick(types)};${pick([' ', ''])}name=${pick(names)}${pick(tails)}`,
  );
}

describe('a form the API handed client A, sent with smuggled parts', () => {
  it('is stored under its own key when sent unchanged', async () => {
    const form = await formForA('b0');
    const answer = await post(
      Buffer.concat([...aFields(form), filePart(BOUNDARY), Buffer.from(`--${BOUNDARY}--\r\n`)]),
      `multipart/form-data; boundary=${BOUNDARY}`,
    );
    expect(answer).toBe('204');
    expect(await keysUnder(`uploads/${A}/b0/`)).toEqual([`uploads/${A}/b0/cat.jpg`]);
    // What was checked is what was stored: the file's bytes, and the type the policy held it to.
    const stored = await operator.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `uploads/${A}/b0/cat.jpg` }));
    expect([stored.ContentType, await stored.Body?.transformToString()]).toEqual(['image/jpeg', CAT.toString()]);
  });

  it('ignores what follows the file, as S3 does: a later key, another file, a header line busboy could not parse', async () => {
    const form = await formForA('after');
    const after = [
      field(BOUNDARY, 'key', `uploads/${B}/after/smuggled.jpg`),
      part(BOUNDARY, 'Content-Disposition: form-data; name="file"; filename="x.jpg"', 'second file'),
      // Read by s3rver's own parser, this line threw an uncaught TypeError (dicer), ending the process.
      part(BOUNDARY, ' X-Leading-Space: y', 'after'),
    ];
    const body = Buffer.concat([...aFields(form), filePart(BOUNDARY), ...after, Buffer.from(`--${BOUNDARY}--\r\n`)]);

    expect(await post(body, `multipart/form-data; boundary=${BOUNDARY}`)).toBe('204');
    expect(await keysUnder(`uploads/${B}/after/`)).toEqual([]);
    const stored = await operator.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `uploads/${A}/after/cat.jpg` }));
    expect(await stored.Body?.transformToString()).toBe(CAT.toString());
  });

  it.each(SMUGGLES.map((s, i) => [s.name, s, i] as const))('writes nothing into B nor processed/ (%s)', async (_name, smuggle, i) => {
    const form = await formForA(`b${i + 1}`);
    const targets = [`uploads/${B}/open${i}/smuggled.jpg`, `processed/${B}/open${i}/smuggled.jpg`];
    const answers: string[] = [];
    for (const target of targets) {
      const { body, contentType } = smuggle.body(form, target);
      answers.push(await post(body, contentType));
    }

    expect(await keysUnder(`uploads/${B}/open${i}/`)).toEqual([]);
    expect(await keysUnder(`processed/${B}/open${i}/`)).toEqual([]);
    // Refused as malformed or unsigned (or stored where the form said, and nowhere else).
    for (const answer of answers) expect(answer).toMatch(/^(400 MalformedPOSTRequest|403 AccessDenied|204)$/);
    expect((await keysUnder(`uploads/${A}/b${i + 1}/`)).every((k) => k === `uploads/${A}/b${i + 1}/cat.jpg`)).toBe(true);
  });

  it('lets none of 40 fuzzed decoy part headers move the file out of its key', async () => {
    const form = await formForA('fuzz');
    const answers: Record<string, number> = {};
    for (const [i, disposition] of fuzzedDecoys(40).entries()) {
      const target = i % 2 === 0 ? `uploads/${B}/fuzz/${i}.jpg` : `processed/${B}/fuzz/${i}.jpg`;
      const { body, contentType } = decoy('fuzzed', disposition).body(form, target);
      const answer = await post(body, contentType);
      answers[answer] = (answers[answer] ?? 0) + 1;
    }

    expect({ b: await keysUnder(`uploads/${B}/fuzz/`), processed: await keysUnder(`processed/${B}/fuzz/`) }).toEqual({
      b: [],
      processed: [],
    });
    expect(Object.keys(answers).every((a) => /^(400 MalformedPOSTRequest|403 AccessDenied|204)$/.test(a))).toBe(true);
    expect((await keysUnder(`uploads/${A}/fuzz/`)).every((k) => k === `uploads/${A}/fuzz/cat.jpg`)).toBe(true);
  });
});

/** The S3 error a call answers ('status Code'), or 'ok'. */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'ok';
  } catch (err) {
    if (err instanceof S3ServiceException) return `${err.$metadata.httpStatusCode} ${err.name}`;
    throw err;
  }
}

describe('a multipart upload, bound to the key it was started for', () => {
  it("answers NoSuchUpload to client B's UploadId used through client A's own prefix, and writes nothing", async () => {
    const as = (clientId: string) => {
      const key = issueClientS3Key(dataDir, clientId);
      return localS3Client(s3.url, { credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey }, maxAttempts: 1 });
    };
    const alice = as(A);
    const bob = as(B);
    const bobsKey = `uploads/${B}/mp/bob.jpg`;
    const started = await bob.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: bobsKey }));
    const UploadId = started.UploadId!;
    const bobsPart = await bob.send(new UploadPartCommand({ Bucket: s3.bucket, Key: bobsKey, UploadId, PartNumber: 1, Body: 'bob-part' }));
    const aliceKey = `uploads/${A}/mp/alice.jpg`;

    const answers = {
      uploadPart: await outcome(
        alice.send(new UploadPartCommand({ Bucket: s3.bucket, Key: aliceKey, UploadId, PartNumber: 2, Body: 'alice' })),
      ),
      listParts: await outcome(alice.send(new ListPartsCommand({ Bucket: s3.bucket, Key: aliceKey, UploadId }))),
      // The operator's key is no exception: S3 binds an upload to its key for everyone.
      operatorComplete: await outcome(
        operator.send(
          new CompleteMultipartUploadCommand({
            Bucket: s3.bucket,
            Key: `processed/${B}/mp/bob.jpg`,
            UploadId,
            MultipartUpload: { Parts: [{ PartNumber: 1, ETag: bobsPart.ETag }] },
          }),
        ),
      ),
      complete: await outcome(
        alice.send(
          new CompleteMultipartUploadCommand({
            Bucket: s3.bucket,
            Key: aliceKey,
            UploadId,
            MultipartUpload: { Parts: [{ PartNumber: 1, ETag: bobsPart.ETag }] },
          }),
        ),
      ),
      abort: await outcome(alice.send(new AbortMultipartUploadCommand({ Bucket: s3.bucket, Key: aliceKey, UploadId }))),
    };

    expect(answers).toEqual({
      uploadPart: '404 NoSuchUpload',
      listParts: '404 NoSuchUpload',
      complete: '404 NoSuchUpload',
      abort: '404 NoSuchUpload',
      operatorComplete: '404 NoSuchUpload',
    });
    expect(await keysUnder(`uploads/${A}/mp/`)).toEqual([]);
    expect(await keysUnder(`uploads/${B}/mp/`)).toEqual([]);
    expect(await keysUnder('processed/')).toEqual([]);
    // B's own upload is untouched: completed through its own key, it holds B's part alone.
    await bob.send(
      new CompleteMultipartUploadCommand({
        Bucket: s3.bucket,
        Key: bobsKey,
        UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: bobsPart.ETag }] },
      }),
    );
    const stored = await operator.send(new GetObjectCommand({ Bucket: s3.bucket, Key: bobsKey }));
    expect(await stored.Body?.transformToString()).toBe('bob-part');
  });
});
