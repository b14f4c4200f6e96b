// The local detector through the stock Rekognition SDK client, with a real s3rver for S3Object input.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  DetectLabelsCommand,
  type DetectLabelsCommandInput,
  ImageTooLargeException,
  InvalidImageFormatException,
  InvalidParameterException,
  InvalidS3ObjectException,
  type Label,
  ProvisionedThroughputExceededException,
  RekognitionClient,
  ThrottlingException,
} from '@aws-sdk/client-rekognition';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { detectCommand } from '../../lib/ingest/detect';
import { LOCAL_CAT_MIN_CONFIDENCE, LOCAL_NAMES, LOCAL_REKOGNITION_MIN_CONFIDENCE } from '../../local/contract';
import type { DetectorStats } from '../../local/detector/detect-labels';
import { startDetectorFromEnvironment } from '../../local/detector/from-environment';
import type { DetectorServer } from '../../local/detector/server';
import { localS3Client } from '../../local/s3/s3';
import { startTestDetector } from '../helpers/detector';

// s3rver ships no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (
  opts: Record<string, unknown>,
) => {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
};

const FIXTURES = path.join(__dirname, '..', 'fixtures');
const BUCKET = LOCAL_NAMES.bucket;
const credentials = { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: LOCAL_NAMES.secretAccessKey };
const fixture = (name: string): Buffer => readFileSync(path.join(FIXTURES, name));

let detector: DetectorServer;
let s3server: InstanceType<typeof S3rver>;
let s3dir: string;
let s3Url: string;
let s3: S3Client;
let rekognition: RekognitionClient;

const rekognitionAt = (url: string): RekognitionClient =>
  new RekognitionClient({ endpoint: url, region: LOCAL_NAMES.region, credentials, maxAttempts: 1 });

const detect = (input: Partial<DetectLabelsCommandInput>, client = rekognition) =>
  client.send(new DetectLabelsCommand({ MinConfidence: LOCAL_REKOGNITION_MIN_CONFIDENCE, ...input } as DetectLabelsCommandInput));

const catConfidence = (labels: Label[] | undefined): number => labels?.find((l) => l.Name === 'Cat')?.Confidence ?? 0;

async function stats(server: DetectorServer): Promise<DetectorStats> {
  return (await (await fetch(`${server.url}/__stats`)).json()) as DetectorStats;
}

/** Runs `fn` with these environment variables set, restoring the previous values after. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

async function setFaults(server: DetectorServer, faults: Record<string, number>): Promise<void> {
  const res = await fetch(`${server.url}/__faults`, { method: 'POST', body: JSON.stringify(faults) });
  if (!res.ok) throw new Error(`POST /__faults answered ${res.status}`);
}

beforeAll(async () => {
  s3dir = mkdtempSync(path.join(tmpdir(), 'detector-s3-'));
  s3server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3dir, configureBuckets: [{ name: BUCKET }] });
  const { port } = await s3server.run();
  s3Url = `http://127.0.0.1:${port}`;
  s3 = localS3Client(s3Url);
  detector = await startTestDetector({}, { s3 });
  rekognition = rekognitionAt(detector.url);
});

afterAll(async () => {
  rekognition?.destroy();
  s3?.destroy();
  await detector?.close();
  await s3server?.close();
  rmSync(s3dir, { recursive: true, force: true });
});

describe('DetectLabels on photos', () => {
  test('the cat photo gets Cat at or above the local cat threshold', async () => {
    // Act
    const out = await detect({ Image: { Bytes: fixture('chelsea.png') } });

    // Assert
    expect(catConfidence(out.Labels)).toBeGreaterThanOrEqual(LOCAL_CAT_MIN_CONFIDENCE);
  });

  test.each(['coffee.png', 'astronaut.png', 'rocket.jpg'])('%s gets no Cat at the local cat threshold', async (name) => {
    // Act
    const out = await detect({ Image: { Bytes: fixture(name) } });

    // Assert
    expect(catConfidence(out.Labels)).toBeLessThan(LOCAL_CAT_MIN_CONFIDENCE);
  });

  test('the Cat label has the parents Pet, Mammal and Animal', async () => {
    // Act
    const out = await detect({ Image: { Bytes: fixture('chelsea.png') } });

    // Assert
    expect(out.Labels?.find((l) => l.Name === 'Cat')?.Parents).toEqual([{ Name: 'Pet' }, { Name: 'Mammal' }, { Name: 'Animal' }]);
  });

  test('the Cat instance box lies within the image', async () => {
    // Act
    const out = await detect({ Image: { Bytes: fixture('chelsea.png') } });

    // Assert
    const b = out.Labels?.find((l) => l.Name === 'Cat')?.Instances?.[0]?.BoundingBox;
    expect(b).toBeDefined();
    const { Left = -1, Top = -1, Width = 0, Height = 0 } = b ?? {};
    expect([Left >= 0, Top >= 0, Width > 0, Height > 0, Left + Width <= 1, Top + Height <= 1]).toEqual(Array(6).fill(true));
  });

  test('the answer names the local model', async () => {
    // Act
    const out = await detect({ Image: { Bytes: fixture('coffee.png') } });

    // Assert
    expect(out.LabelModelVersion).toMatch(/centernet/);
  });

  test('a JPEG of the cat photo is read like the PNG', async () => {
    // Arrange
    const jpeg = await sharp(fixture('chelsea.png')).jpeg({ quality: 90 }).toBuffer();

    // Act
    const out = await detect({ Image: { Bytes: jpeg } });

    // Assert
    expect(catConfidence(out.Labels)).toBeGreaterThanOrEqual(LOCAL_CAT_MIN_CONFIDENCE);
  });

  test('concurrent calls are all answered', async () => {
    // Arrange
    const images = ['chelsea.png', 'coffee.png', 'astronaut.png', 'rocket.jpg'].map(fixture);

    // Act
    const outs = await Promise.all(images.map((Bytes) => detect({ Image: { Bytes } })));

    // Assert
    expect(outs.map((o) => o.$metadata.httpStatusCode)).toEqual([200, 200, 200, 200]);
  });
});

describe('DetectLabels parameters', () => {
  test('MaxLabels caps the number of labels', async () => {
    // Act
    const out = await detect({ Image: { Bytes: fixture('chelsea.png') }, MaxLabels: 2 });

    // Assert
    expect(out.Labels).toHaveLength(2);
  });

  test('MinConfidence leaves out labels below it', async () => {
    // Act
    const out = await detect({ Image: { Bytes: fixture('chelsea.png') }, MinConfidence: 40 });

    // Assert
    expect(out.Labels?.every((l) => (l.Confidence ?? 0) >= 40)).toBe(true);
  });

  test('a GeneralLabels exclusion filter removes the label', async () => {
    // Act
    const out = await detect({
      Image: { Bytes: fixture('chelsea.png') },
      Settings: { GeneralLabels: { LabelExclusionFilters: ['Cat'] } },
    });

    // Assert
    expect(out.Labels?.map((l) => l.Name)).not.toContain('Cat');
  });

  test('a GeneralLabels inclusion filter returns only the labels named', async () => {
    // Act
    const out = await detect({
      Image: { Bytes: fixture('chelsea.png') },
      Settings: { GeneralLabels: { LabelInclusionFilters: ['Cat'] } },
    });

    // Assert
    expect(out.Labels?.map((l) => l.Name)).toEqual(['Cat']);
  });

  test('MinConfidence above 100 is an InvalidParameterException', async () => {
    await expect(detect({ Image: { Bytes: fixture('chelsea.png') }, MinConfidence: 101 })).rejects.toBeInstanceOf(
      InvalidParameterException,
    );
  });

  test('an Image with neither Bytes nor S3Object is an InvalidParameterException', async () => {
    await expect(detect({ Image: {} })).rejects.toBeInstanceOf(InvalidParameterException);
  });
});

describe('DetectLabels refusals', () => {
  test('WebP bytes are an InvalidImageFormatException', async () => {
    // Arrange
    const webp = await sharp(fixture('chelsea.png')).webp().toBuffer();

    // Act / Assert
    await expect(detect({ Image: { Bytes: webp } })).rejects.toBeInstanceOf(InvalidImageFormatException);
  });

  test('a truncated JPEG is an InvalidImageFormatException', async () => {
    // Arrange
    const jpeg = await sharp(fixture('chelsea.png')).jpeg().toBuffer();

    // Act / Assert
    await expect(detect({ Image: { Bytes: jpeg.subarray(0, 200) } })).rejects.toBeInstanceOf(InvalidImageFormatException);
  });

  test('6 MB of image bytes are an ImageTooLargeException', async () => {
    // Arrange: noise does not compress, so a 1500x1400 RGB PNG of it is over 6 MB
    const noise = await sharp(randomBytes(1500 * 1400 * 3), { raw: { width: 1500, height: 1400, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    expect(noise.length).toBeGreaterThan(6 * 1024 * 1024);

    // Act / Assert
    await expect(detect({ Image: { Bytes: noise } })).rejects.toBeInstanceOf(ImageTooLargeException);
  });

  test('a 40x40 image is an InvalidParameterException', async () => {
    // Arrange
    const tiny = await sharp(fixture('chelsea.png')).resize(40, 40).png().toBuffer();

    // Act / Assert
    await expect(detect({ Image: { Bytes: tiny } })).rejects.toBeInstanceOf(InvalidParameterException);
  });

  test('a refusal answers HTTP 400', async () => {
    // Arrange
    const webp = await sharp(fixture('chelsea.png')).webp().toBuffer();

    // Act
    const err = (await detect({ Image: { Bytes: webp } }).catch((e: unknown) => e)) as InvalidImageFormatException;

    // Assert
    expect(err.$metadata.httpStatusCode).toBe(400);
  });
});

describe('DetectLabels with Image.S3Object', () => {
  test('an S3Object is read from the local S3', async () => {
    // Arrange
    const key = 'uploads/demo/batch-1/chelsea.png';
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: fixture('chelsea.png') }));

    // Act
    const out = await detect({ Image: { S3Object: { Bucket: BUCKET, Name: key } } });

    // Assert
    expect(catConfidence(out.Labels)).toBeGreaterThanOrEqual(LOCAL_CAT_MIN_CONFIDENCE);
  });

  test('a missing object is an InvalidS3ObjectException', async () => {
    await expect(detect({ Image: { S3Object: { Bucket: BUCKET, Name: 'uploads/demo/none/missing.png' } } })).rejects.toBeInstanceOf(
      InvalidS3ObjectException,
    );
  });

  test('a missing bucket is an InvalidS3ObjectException', async () => {
    await expect(detect({ Image: { S3Object: { Bucket: 'no-such-bucket', Name: 'a.png' } } })).rejects.toBeInstanceOf(
      InvalidS3ObjectException,
    );
  });

  test('an S3 object over 15 MB is an ImageTooLargeException', async () => {
    // Arrange: incompressible noise, 2400x2200 RGB stored as an uncompressed PNG (~15.8 MB)
    const key = 'uploads/demo/batch-1/huge.png';
    const huge = await sharp(randomBytes(2400 * 2200 * 3), { raw: { width: 2400, height: 2200, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    expect(huge.length).toBeGreaterThan(15 * 1024 * 1024);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: huge }));

    // Act / Assert
    await expect(detect({ Image: { S3Object: { Bucket: BUCKET, Name: key } } })).rejects.toBeInstanceOf(ImageTooLargeException);
  });

  test('started from the environment (npm run detector), the S3 endpoint comes from AWS_ENDPOINT_URL_S3', async () => {
    // Arrange
    const key = 'uploads/demo/batch-2/chelsea.png';
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: fixture('chelsea.png') }));
    const env = {
      AWS_ENDPOINT_URL_S3: s3Url,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: LOCAL_NAMES.region,
      AWS_ACCESS_KEY_ID: LOCAL_NAMES.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_NAMES.secretAccessKey,
      ICECAT_DETECTOR_WORKERS: '1',
    };

    // Act
    const out = await withEnv(env, async () => {
      const server = await startDetectorFromEnvironment({ port: 0 });
      const client = rekognitionAt(server.url);
      try {
        return await detect({ Image: { S3Object: { Bucket: BUCKET, Name: key } } }, client);
      } finally {
        client.destroy();
        await server.close();
      }
    });

    // Assert
    expect(catConfidence(out.Labels)).toBeGreaterThanOrEqual(LOCAL_CAT_MIN_CONFIDENCE);
  });

  test('a stored WebP object is an InvalidImageFormatException', async () => {
    // Arrange
    const key = 'uploads/demo/batch-1/cat.webp';
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: await sharp(fixture('chelsea.png')).webp().toBuffer() }));

    // Act / Assert
    await expect(detect({ Image: { S3Object: { Bucket: BUCKET, Name: key } } })).rejects.toBeInstanceOf(InvalidImageFormatException);
  });
});

describe('fault injection and counters', () => {
  test('a server configured with throttleRate 1 answers ThrottlingException', async () => {
    // Arrange
    const throttling = await startTestDetector({ workers: 1, throttleRate: 1 });
    const client = rekognitionAt(throttling.url);

    // Act
    const result = detect({ Image: { Bytes: fixture('chelsea.png') } }, client);

    // Assert
    await expect(result).rejects.toBeInstanceOf(ThrottlingException);
    client.destroy();
    await throttling.close();
  });

  test('ICECAT_DETECTOR_THROTTLE_RATE=1 in the environment throttles every call', async () => {
    // Arrange
    const throttling = await withEnv({ ICECAT_DETECTOR_THROTTLE_RATE: '1', ICECAT_DETECTOR_WORKERS: '1' }, () =>
      startDetectorFromEnvironment({ port: 0 }),
    );
    const client = rekognitionAt(throttling.url);

    // Act
    const result = detect({ Image: { Bytes: fixture('chelsea.png') } }, client);

    // Assert
    await expect(result).rejects.toBeInstanceOf(ThrottlingException);
    client.destroy();
    await throttling.close();
  });

  test('an injected throttle answers HTTP 500 as Rekognition does', async () => {
    // Arrange
    const server = await startTestDetector({ workers: 1 });
    const client = rekognitionAt(server.url);
    await setFaults(server, { throttleNext: 1 });

    // Act
    const err = (await detect({ Image: { Bytes: fixture('coffee.png') } }, client).catch((e: unknown) => e)) as ThrottlingException;

    // Assert
    expect(err.$metadata.httpStatusCode).toBe(500);
    client.destroy();
    await server.close();
  });

  test('an invalid fault setting is refused', async () => {
    // Act
    const res = await fetch(`${detector.url}/__faults`, { method: 'POST', body: JSON.stringify({ throttleRate: 2 }) });

    // Assert
    expect(res.status).toBe(400);
  });

  test('throttleNext posted to /__faults throttles exactly the next call', async () => {
    // Arrange
    const server = await startTestDetector({ workers: 1 });
    const client = rekognitionAt(server.url);
    await setFaults(server, { throttleNext: 1 });

    // Act
    const first = await detect({ Image: { Bytes: fixture('coffee.png') } }, client).catch((e: unknown) => e);
    const second = await detect({ Image: { Bytes: fixture('coffee.png') } }, client).catch((e: unknown) => e);

    // Assert
    expect([first instanceof ThrottlingException, second instanceof ThrottlingException]).toEqual([true, false]);
    client.destroy();
    await server.close();
  });

  test('the SDK retries an injected throttle and then succeeds', async () => {
    // Arrange
    const server = await startTestDetector({ workers: 1 });
    const client = new RekognitionClient({ endpoint: server.url, region: LOCAL_NAMES.region, credentials, maxAttempts: 3 });
    await setFaults(server, { throttleNext: 1 });

    // Act
    const out = await detect({ Image: { Bytes: fixture('coffee.png') } }, client);

    // Assert
    expect(out.$metadata.attempts).toBe(2);
    client.destroy();
    await server.close();
  });

  test('/__stats counts DetectLabels calls and throttled calls', async () => {
    // Arrange
    const server = await startTestDetector({ workers: 1 });
    const client = rekognitionAt(server.url);
    await setFaults(server, { throttleNext: 1 });

    // Act
    await detect({ Image: { Bytes: fixture('coffee.png') } }, client).catch(() => undefined);
    await detect({ Image: { Bytes: fixture('coffee.png') } }, client);
    const counted = await stats(server);

    // Assert
    expect([counted.detectLabels, counted.throttled, counted.succeeded]).toEqual([2, 1, 1]);
    client.destroy();
    await server.close();
  });

  test('a worker that crashes during a DetectLabels call is replaced, and the call is answered once', async () => {
    // Arrange
    const server = await startTestDetector({ workers: 1 });
    const client = rekognitionAt(server.url);
    await setFaults(server, { crashNext: 1 });

    // Act
    const out = await detect({ Image: { Bytes: fixture('chelsea.png') } }, client);
    const counted = await stats(server);

    // Assert
    expect(catConfidence(out.Labels)).toBeGreaterThanOrEqual(LOCAL_CAT_MIN_CONFIDENCE);
    expect(counted).toMatchObject({ detectLabels: 1, succeeded: 1, workers: 1, workersReplaced: 1, imagesRetried: 1, pending: 0 });
    client.destroy();
    await server.close();
  });

  test("counts an image's worker time for the client the ingest's hint header names, and no other", async () => {
    // Arrange
    const server = await startTestDetector({ workers: 1 });
    const client = rekognitionAt(server.url);
    const image = fixture('chelsea.png');
    const input = { Image: { Bytes: image }, MinConfidence: LOCAL_REKOGNITION_MIN_CONFIDENCE, MaxLabels: 25 };

    // Act: one image named by the hint, one by a hint that is no client id, one by none
    await client.send(detectCommand(input, 'acme'));
    await client.send(detectCommand(input, '../not an id'));
    await client.send(detectCommand(input));
    const counted = await stats(server);

    // Assert
    expect(Object.keys(counted.recentWorkerMs)).toEqual(['acme']);
    expect(counted.recentWorkerMs.acme).toBeGreaterThan(0);
    expect(counted.succeeded).toBe(3);
    client.destroy();
    await server.close();
  });

  test('/__stats counts the calls of every worker', async () => {
    // Arrange
    const server = await startTestDetector({ workers: 2 });
    const client = rekognitionAt(server.url);

    // Act
    await Promise.all([1, 2, 3, 4].map(() => detect({ Image: { Bytes: fixture('chelsea.png') } }, client)));
    const counted = await stats(server);

    // Assert
    expect(counted).toMatchObject({ detectLabels: 4, succeeded: 4, workers: 2, pending: 0 });
    client.destroy();
    await server.close();
  });

  test('calls beyond maxPending are refused with ProvisionedThroughputExceededException', async () => {
    // Arrange: each call holds its slot for the injected latency, far longer than sending three calls takes
    const server = await startTestDetector({ workers: 1, latencyMs: 1500 }, { maxPending: 1 });
    const client = rekognitionAt(server.url);

    // Act
    const results = await Promise.all(
      [1, 2, 3].map(() => detect({ Image: { Bytes: fixture('coffee.png') } }, client).catch((e: unknown) => e)),
    );

    // Assert
    expect(results.filter((r) => r instanceof ProvisionedThroughputExceededException)).toHaveLength(2);
    client.destroy();
    await server.close();
  });

  test('repeated detections leave no tensors behind', async () => {
    // Arrange
    await detect({ Image: { Bytes: fixture('coffee.png') } });
    const before = (await stats(detector)).tensors;

    // Act
    await detect({ Image: { Bytes: fixture('chelsea.png') } });
    await detect({ Image: { Bytes: fixture('rocket.jpg') } });

    // Assert
    expect((await stats(detector)).tensors).toBe(before);
  });
});

describe("Confidence on Rekognition's scale", () => {
  const NON_CATS = ['coffee.png', 'astronaut.png', 'rocket.jpg', 'camera.png', 'clock_motion.png', 'brick.png', 'grass.png', 'gravel.png'];
  const catVariants = async (): Promise<Record<string, Buffer>> => {
    const cat = fixture('chelsea.png');
    return {
      colour: cat,
      greyscale: await sharp(cat).greyscale().png().toBuffer(),
      'rotated 90°': await sharp(cat).rotate(90).png().toBuffer(),
      '120 px wide': await sharp(cat).resize(120).png().toBuffer(),
      'left crop': await sharp(cat).extract({ left: 0, top: 0, width: 300, height: 300 }).png().toBuffer(),
      'right crop': await sharp(cat).extract({ left: 151, top: 0, width: 300, height: 300 }).png().toBuffer(),
    };
  };

  test("the cat photo and its variants score at or above Rekognition's cat threshold, 80, and every non-cat fixture below", async () => {
    // Arrange
    const cats = Object.entries(await catVariants());

    // Act
    const catScores = await Promise.all(
      cats.map(async ([name, Bytes]) => [name, catConfidence((await detect({ Image: { Bytes } })).Labels)] as const),
    );
    const nonCatScores = await Promise.all(
      NON_CATS.map(async (name) => [name, catConfidence((await detect({ Image: { Bytes: fixture(name) } })).Labels)] as const),
    );

    // Assert
    expect(LOCAL_CAT_MIN_CONFIDENCE).toBe(80);
    expect(catScores.filter(([, c]) => c < 80)).toEqual([]);
    expect(nonCatScores.filter(([, c]) => c >= 80)).toEqual([]);
  });

  test("the Cat instance's Confidence is on the same scale as the label's", async () => {
    // Act
    const out = await detect({ Image: { Bytes: fixture('chelsea.png') } });

    // Assert
    const cat = out.Labels?.find((l) => l.Name === 'Cat');
    expect(cat?.Instances?.[0]?.Confidence).toBe(cat?.Confidence);
    expect(cat?.Confidence).toBeGreaterThanOrEqual(80);
  });

  test('MinConfidence 80 keeps Cat on the cat photo and leaves out the labels under it', async () => {
    // Act
    const out = await detect({ Image: { Bytes: fixture('chelsea.png') }, MinConfidence: 80 });

    // Assert
    expect(out.Labels?.map((l) => l.Name)).toContain('Cat');
    expect(
      out.Labels?.flatMap((l) => [l.Confidence ?? 0, ...(l.Instances ?? []).map((i) => i.Confidence ?? 0)]).filter((c) => c < 80),
    ).toEqual([]);
  });
});
