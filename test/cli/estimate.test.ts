// The dry run's estimate applies the ingest's own checks on the pixels (issue 29, item 14): an image the ingest refuses
// (ImageTooSmall under 80 px a side, as well as not an image) is no DetectLabels call in the estimate.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { estimateUpload, localFingerprints } from '../../lib/cli/estimate';
import { DEFAULT_MAX_INPUT_PIXELS } from '../../lib/config';
import { RejectedUploadError } from '../../lib/ingest/errors';
import { detectableImage } from '../../lib/ingest/fingerprint';

const square = (width: number, height: number, r: number) =>
  sharp({ create: { width, height, channels: 3, background: { r, g: 120, b: 60 } } })
    .png()
    .toBuffer();

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'icecat-estimate-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a 50x50 image in the folder is not counted as a DetectLabels call, as the ingest refuses it ImageTooSmall', async () => {
  const files: [string, Buffer][] = [
    ['tiny.png', await square(50, 50, 10)],
    ['narrow.png', await square(200, 79, 20)],
    ['least.png', await square(80, 80, 30)],
    ['photo.png', await square(120, 100, 40)],
  ];
  for (const [name, bytes] of files) writeFileSync(path.join(dir, name), bytes);
  const refused = await detectableImage(files[0]![1], { maxInputPixels: DEFAULT_MAX_INPUT_PIXELS }).catch((err: unknown) => err);

  const fprints = await localFingerprints(files.map(([name]) => path.join(dir, name)));
  const estimate = await estimateUpload(fprints, undefined, 0.001);

  expect(refused).toBeInstanceOf(RejectedUploadError);
  expect((refused as RejectedUploadError).code).toBe('ImageTooSmall');
  expect(fprints.map((f) => f !== undefined)).toEqual([false, false, true, true]);
  expect(estimate).toEqual({ images: 2, distinct: 2, known: 0, newCalls: 2, estimatedCostUsd: 0.002 });
});
