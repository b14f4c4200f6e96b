// The detector's memo (local/detector/memo.ts), which the test stacks turn on: an image it has run through the model
// is answered from memory with the very labels the model gave, while every call is still counted and open to faults,
// a worker fault still reaches a worker, and the least recently used image is the one forgotten.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DetectLabelsCommand, RekognitionClient } from '@aws-sdk/client-rekognition';
import { LOCAL_NAMES, LOCAL_REKOGNITION_MIN_CONFIDENCE } from '../../local/contract';
import type { DetectorServer } from '../../local/detector/server';
import { startTestDetector } from '../helpers/detector';

const FIXTURES = path.join(__dirname, '..', 'fixtures');
const [CAT, CUP, CLOCK] = ['chelsea.png', 'coffee.png', 'clock_motion.png'].map((f) => readFileSync(path.join(FIXTURES, f)));

let server: DetectorServer;
let rekognition: RekognitionClient;

const stats = async () =>
  (await (await fetch(`${server.url}/__stats`)).json()) as {
    detectLabels: number;
    succeeded: number;
    memoHits: number;
    workersReplaced: number;
  };
const faults = (patch: object) => fetch(`${server.url}/__faults`, { method: 'POST', body: JSON.stringify(patch) });
const detect = (Bytes: Buffer) =>
  rekognition.send(new DetectLabelsCommand({ Image: { Bytes }, MinConfidence: LOCAL_REKOGNITION_MIN_CONFIDENCE }));

beforeAll(async () => {
  server = await startTestDetector({ workers: 1 }, { memoEntries: 2 });
  rekognition = new RekognitionClient({
    endpoint: server.url,
    region: LOCAL_NAMES.region,
    credentials: { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: LOCAL_NAMES.secretAccessKey },
    maxAttempts: 1,
  });
}, 60_000);

afterAll(async () => {
  rekognition.destroy();
  await server.close();
});

describe('the detector’s memo', () => {
  it('answers an image seen before with the same labels, counted as a call, without a worker', async () => {
    const first = await detect(CAT!);
    const again = await detect(CAT!);
    expect(again.Labels).toEqual(first.Labels);
    expect(again.LabelModelVersion).toBe(first.LabelModelVersion);
    expect(first.Labels?.map((l) => l.Name)).toContain('Cat');
    expect(await stats()).toMatchObject({ detectLabels: 2, succeeded: 2, memoHits: 1 });
  });

  it('still throttles a remembered image when told to, and still hands a worker fault to a worker', async () => {
    await faults({ throttleNext: 1 });
    await expect(detect(CAT!)).rejects.toMatchObject({ name: 'ThrottlingException' });
    await faults({ crashNext: 1 });
    const before = await stats();
    // The crashed worker's image goes to its replacement, once: the call still answers, from the model.
    expect((await detect(CAT!)).Labels?.map((l) => l.Name)).toContain('Cat');
    const after = await stats();
    expect(after.workersReplaced).toBe(before.workersReplaced + 1);
    expect(after.memoHits).toBe(before.memoHits);
  });

  it('forgets the least recently used image first', async () => {
    await detect(CUP!); // memo: CAT, CUP
    await detect(CAT!); // CAT used last
    await detect(CLOCK!); // CUP forgotten: CAT, CLOCK
    const before = (await stats()).memoHits;
    await detect(CAT!);
    expect((await stats()).memoHits).toBe(before + 1);
    await detect(CUP!);
    expect((await stats()).memoHits).toBe(before + 1);
  });
});
