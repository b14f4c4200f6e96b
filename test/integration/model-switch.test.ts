// A real switch of the local model (ICECAT_DETECTOR_MODEL, docs/api.md "Re-detect" and "Model versions"): a batch
// classified by CenterNet, the stack stopped and started again on the same data under NanoDet, re-detected, lists
// the verdicts the two models disagree on with both models named; and the same pixels uploaded after the switch are
// classified again by NanoDet, not reused from CenterNet's answer. No stored model string is rewritten.
// The flip: chelsea.png blurred with sigma 4 is no cat to CenterNet (Cat 17.1) and a cat to NanoDet (Cat 90.8) at the
// threshold of 80; the plain photo is a cat to both (97.1, 97.1) and seeded noise none to either.
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { tempDataDir } from '../helpers';
import {
  api,
  distinctImages,
  doneWithin,
  endStackTrial,
  type StackProcess,
  seededRandom,
  startStackProcess,
  uploadImages,
  withStackLog,
} from '../helpers/stack-process';

const FIXTURES = path.join(__dirname, '..', 'fixtures');

interface Image {
  fprint: string;
  fileName: string;
  isCat: boolean;
  catConfidence: number;
  reused: boolean;
}

type Models = { name: string; version: string; images: number }[];
const modelsOf = async (stack: StackProcess, key: string, batchId: string) =>
  (await api(stack, key, 'GET', `/v1/batches/${batchId}`)).body.models as Models;

/** Creates a batch expecting `images.length` files img-00.png…, uploads them and waits until it is done. */
async function classify(stack: StackProcess, key: string, batchId: string, images: Buffer[]): Promise<Map<string, Image>> {
  const files = images.map((_, i) => ({ name: `img-${String(i).padStart(2, '0')}.png`, contentType: 'image/png', size: 100_000 }));
  expect((await api(stack, key, 'POST', '/v1/batches', { batchId, files })).status).toBe(201);
  expect(await uploadImages(stack, batchId, images)).toEqual([]);
  await doneWithin(stack, key, batchId, 60_000);
  return listImages(stack, key, batchId);
}

async function listImages(stack: StackProcess, key: string, batchId: string): Promise<Map<string, Image>> {
  const page = await api(stack, key, 'GET', `/v1/batches/${batchId}/images?limit=100`);
  return new Map((page.body.items as Image[]).map((i) => [i.fileName, i]));
}

async function stop(stack: StackProcess): Promise<void> {
  stack.signal('SIGTERM');
  await stack.exited;
  stack.s3.destroy();
}

describe('a real switch of the local model from CenterNet to NanoDet', () => {
  it("lists a re-detected batch's flips with both models named, and classifies the same pixels again after it", async () => {
    const dir = tempDataDir('icecat-model-switch-');
    const dataDir = path.join(dir, 'data');
    const logFile = path.join(dir, 'stack.log');
    mkdirSync(dataDir);
    const chelsea = path.join(FIXTURES, 'chelsea.png');
    // img-00: a cat to both; img-01: a cat to NanoDet only; img-02: no cat to either.
    const images = [
      await sharp(chelsea).png().toBuffer(),
      await sharp(chelsea).blur(4).png().toBuffer(),
      ...(await distinctImages(1, seededRandom(31))),
    ];
    const batchId = 'switch-first';
    let stack = await startStackProcess(dataDir, logFile, { ICECAT_DETECTOR_MODEL: 'centernet' });
    try {
      // Arrange: the batch classified by CenterNet; the stack stopped and started again under NanoDet.
      const key = readFileSync(path.join(dataDir, 'demo-api-key'), 'utf8').trim();
      const before = await classify(stack, key, batchId, images);
      const modelsBefore = await modelsOf(stack, key, batchId);
      await stop(stack);
      stack = await startStackProcess(dataDir, logFile, { ICECAT_DETECTOR_MODEL: 'nanodet' });

      // Act: the same pixels uploaded after the switch; then the first batch re-detected.
      const again = await classify(stack, key, 'switch-again', [images[1] as Buffer]);
      const modelsAgain = await modelsOf(stack, key, 'switch-again');
      const dry = await api(stack, key, 'POST', `/v1/batches/${batchId}:redetect`, { dryRun: true });
      const started = await api(stack, key, 'POST', `/v1/batches/${batchId}:redetect`, {});
      await doneWithin(stack, key, batchId, 60_000);
      const after = await listImages(stack, key, batchId);
      const modelsAfter = await modelsOf(stack, key, batchId);
      const changes = await api(stack, key, 'GET', `/v1/batches/${batchId}/changes`);

      // Assert: CenterNet's verdicts first.
      const verdicts = (m: Map<string, Image>) => Object.fromEntries([...m].map(([name, i]) => [name, i.isCat]));
      expect(verdicts(before)).toEqual({ 'img-00.png': true, 'img-01.png': false, 'img-02.png': false });
      expect(modelsBefore).toEqual([expect.objectContaining({ name: expect.stringMatching(/^centernet-/), images: 3 })]);
      const [centernet] = modelsBefore.map(({ name, version }) => ({ name, version }));
      // Every image was answered by another model: each one is owed a new call.
      expect(dry.body).toMatchObject({ dryRun: true, images: 3, newCalls: 3 });
      expect(started.body).toMatchObject({ dryRun: false, images: 3, newCalls: 3, batch: { status: 'processing' } });
      expect(verdicts(after)).toEqual({ 'img-00.png': true, 'img-01.png': true, 'img-02.png': false });
      expect(modelsAfter).toEqual([expect.objectContaining({ name: expect.stringMatching(/^nanodet-/), images: 3 })]);
      const [nanodet] = modelsAfter.map(({ name, version }) => ({ name, version }));
      // Only the flip is listed; the images both models agree on are not.
      const flipped = before.get('img-01.png') as Image;
      expect(changes.body.items).toEqual([
        {
          fprint: flipped.fprint,
          fileName: 'img-01.png',
          change: 'not cat → cat',
          previous: { model: centernet, isCat: false, catConfidence: flipped.catConfidence },
          current: { model: nanodet, isCat: true, catConfidence: after.get('img-01.png')?.catConfidence },
        },
      ]);
      expect(flipped.catConfidence).toBeLessThan(80);
      expect(after.get('img-01.png')?.catConfidence).toBeGreaterThanOrEqual(80);
      // The same pixels after the switch: classified again by NanoDet, not CenterNet's answer reused.
      expect(again.get('img-00.png')).toMatchObject({
        fprint: flipped.fprint,
        reused: false,
        isCat: true,
      });
      expect(modelsAgain).toEqual([{ ...nanodet, images: 1 }]);
    } catch (err) {
      throw withStackLog(err, logFile);
    } finally {
      await endStackTrial(stack, dir);
    }
  }, 240_000);
});
