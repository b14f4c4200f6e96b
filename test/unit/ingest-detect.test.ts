import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RekognitionClient } from '@aws-sdk/client-rekognition';
import sharp from 'sharp';
import {
  buildDetectRequest,
  CLIENT_HINT_HEADER,
  canSendAsIs,
  detectLabels,
  interpretLabels,
  toRekognitionJpeg,
} from '../../lib/ingest/detect';

const facts = { bytes: 1_000_000, format: 'jpeg', width: 4000, height: 3000 };

describe('canSendAsIs', () => {
  it('sends a JPEG or PNG within limits as the bytes read', () => {
    expect(canSendAsIs(facts)).toBe(true);
    expect(canSendAsIs({ ...facts, format: 'png' })).toBe(true);
  });

  it.each([
    ['a WebP', { format: 'webp' }],
    ["a file over 5 MB (Image.Bytes' limit)", { bytes: 5 * 1024 * 1024 + 1 }],
    ['a side over 10,000 px', { width: 12_000 }],
  ])('converts %s', (_what, change) => {
    expect(canSendAsIs({ ...facts, ...change })).toBe(false);
  });
});

describe('buildDetectRequest', () => {
  it('sends bytes, never an S3Object (Rekognition would read the key again)', () => {
    const bytes = Buffer.from('jpeg');
    expect(buildDetectRequest(bytes, { minConfidence: 50, maxLabels: 25 })).toEqual({
      Image: { Bytes: bytes },
      MinConfidence: 50,
      MaxLabels: 25,
    });
  });
});

describe('toRekognitionJpeg', () => {
  it('turns a large WebP into an upright JPEG within 5 MB and 4,096 px', async () => {
    const webp = await sharp({ create: { width: 5000, height: 1000, channels: 3, background: '#884422' } })
      .webp()
      .toBuffer();

    const jpeg = await toRekognitionJpeg(webp, 50_000_000);
    const meta = await sharp(jpeg).metadata();

    expect(meta.format).toBe('jpeg');
    expect(meta.width).toBe(4096);
    expect(jpeg.length).toBeLessThanOrEqual(5 * 1024 * 1024);
  });
});

describe('interpretLabels', () => {
  const out = {
    LabelModelVersion: '3.0',
    Labels: [
      { Name: 'Pet', Confidence: 99.1, Parents: [{ Name: 'Animal' }] },
      { Name: 'Cat', Confidence: 97.456, Parents: [{ Name: 'Pet' }, { Name: 'Mammal' }], Instances: [{}, {}] },
    ],
  };

  it('flags a cat at or above the threshold', () => {
    expect(interpretLabels(out, 90).isCat).toBe(true);
  });

  it('does not flag a cat below the threshold', () => {
    expect(interpretLabels(out, 98).isCat).toBe(false);
  });

  it('keeps names, confidences, parents and instance counts only', () => {
    expect(interpretLabels(out, 90).trimmed).toEqual({
      model: '3.0',
      labels: [
        { name: 'Pet', confidence: 99.1, parents: ['Animal'], instances: 0 },
        { name: 'Cat', confidence: 97.46, parents: ['Pet', 'Mammal'], instances: 2 },
      ],
    });
  });
});

describe('the client hint (REKOGNITION_CLIENT_HINT, the local detector only)', () => {
  // A stand-in endpoint on loopback that answers every DetectLabels with no labels and keeps the headers it was sent.
  const seen: IncomingHttpHeaders[] = [];
  let server: Server;
  let rekognition: RekognitionClient;

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ Labels: [], LabelModelVersion: '3.0' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    rekognition = new RekognitionClient({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  });

  afterAll(async () => {
    rekognition.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const opts = { minConfidence: 20, maxLabels: 25, catMinConfidence: 80, maxInputPixels: 100_000_000 };
  const jpeg = { bytes: 4, format: 'jpeg', width: 10, height: 10 };

  it('names the uploading client in its header when given one', async () => {
    // Act
    await detectLabels(rekognition, jpeg, Buffer.from('jpeg'), { ...opts, clientHint: 'acme' });

    // Assert
    expect(seen.at(-1)?.[CLIENT_HINT_HEADER]).toBe('acme');
  });

  it('sends no such header otherwise (as to Rekognition itself)', async () => {
    // Act
    await detectLabels(rekognition, jpeg, Buffer.from('jpeg'), opts);

    // Assert
    expect(seen.at(-1)?.['x-amz-target']).toBe('RekognitionService.DetectLabels');
    expect(seen.at(-1)).not.toHaveProperty(CLIENT_HINT_HEADER);
  });
});
