import { buildDetectRequest, canSendAsIs, interpretLabels, toRekognitionJpeg } from '../../lib/ingest/detect';
import sharp from 'sharp';

const facts = { bytes: 1_000_000, format: 'jpeg', width: 4000, height: 3000 };

describe('canSendAsIs', () => {
  it('sends a JPEG or PNG within limits as the bytes read', () => {
    expect(canSendAsIs(facts)).toBe(true);
    expect(canSendAsIs({ ...facts, format: 'png' })).toBe(true);
  });

  it.each([
    ['a WebP', { format: 'webp' }],
    ['a file over 5 MB (Image.Bytes\' limit)', { bytes: 5 * 1024 * 1024 + 1 }],
    ['a side over 10,000 px', { width: 12_000 }],
  ])('converts %s', (_what, change) => {
    expect(canSendAsIs({ ...facts, ...change })).toBe(false);
  });
});

describe('buildDetectRequest', () => {
  it('sends bytes, never an S3Object (Rekognition would read the key again)', () => {
    const bytes = Buffer.from('jpeg');
    expect(buildDetectRequest(bytes, { minConfidence: 50, maxLabels: 25 })).toEqual({ Image: { Bytes: bytes }, MinConfidence: 50, MaxLabels: 25 });
  });
});

describe('toRekognitionJpeg', () => {
  it('turns a large WebP into an upright JPEG within 5 MB and 4,096 px', async () => {
    const webp = await sharp({ create: { width: 5000, height: 1000, channels: 3, background: '#884422' } }).webp().toBuffer();

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
