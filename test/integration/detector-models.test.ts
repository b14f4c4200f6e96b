// The local detector's two models (ICECAT_DETECTOR_MODEL) and the honesty of their labels: on every labelled photo
// fixture (test/fixtures/labels.json), the labels at 80 or above are what a person named there, and a label whose
// fixtures never proved it stays under 80. NanoDet's files are fetched first when missing (npm run detector:models).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DetectLabelsCommand, type Label, RekognitionClient } from '@aws-sdk/client-rekognition';
import { LOCAL_NAMES, LOCAL_REKOGNITION_MIN_CONFIDENCE } from '../../local/contract';
import { ensureModelFiles } from '../../local/detector/fetch-models';
import { detectorSettingsFromEnvironment } from '../../local/detector/from-environment';
import { toLabels } from '../../local/detector/labels';
import { DETECTOR_MODELS, type DetectorModelName } from '../../local/detector/model-catalog';
import { loadDetector } from '../../local/detector/object-detector';
import { MODEL_SCALES } from '../../local/detector/scales';
import { startTestDetector } from '../helpers/detector';

const ROOT = path.join(__dirname, '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures');
const fixture = (name: string): Buffer => readFileSync(path.join(FIXTURES, name));
const LABELLED = (JSON.parse(fixture('labels.json').toString()) as { images: Record<string, { labels: string[]; acceptable?: string[] }> })
  .images;
const credentials = { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: LOCAL_NAMES.secretAccessKey };

/** The labels at 80 or above without their ancestors (a right leaf makes its ancestors right). */
const sureLeaves = (labels: Label[] | undefined): string[] =>
  (labels ?? [])
    .filter((l) => (l.Confidence ?? 0) >= 80 && (l.Instances ?? []).length > 0)
    .map((l) => `${l.Name} ${l.Confidence?.toFixed(1)}`);

/** DetectLabels through the stock SDK on an endpoint running the model. */
async function detectWith(model: DetectorModelName, images: Buffer[]): Promise<{ version?: string; labels: Label[][] }> {
  const server = await startTestDetector({ workers: 1, model });
  const client = new RekognitionClient({ endpoint: server.url, region: LOCAL_NAMES.region, credentials, maxAttempts: 1 });
  try {
    const labels: Label[][] = [];
    let version: string | undefined;
    for (const Bytes of images) {
      const out = await client.send(new DetectLabelsCommand({ Image: { Bytes }, MinConfidence: LOCAL_REKOGNITION_MIN_CONFIDENCE }));
      labels.push(out.Labels ?? []);
      version = out.LabelModelVersion;
    }
    return { version, labels };
  } finally {
    client.destroy();
    await server.close();
  }
}

/**
 * The photos where one curve for every class put wrong labels at 80 or above with both models (a grey cat "Dog", a
 * retina "Umbrella" or "Bed", a cell "Ball" or "Frisbee", a blurred clock "Mouse" or "Toilet"), and the cup photo,
 * whose Cup is right; `npm run bench detector` judges every labelled photo.
 */
const JUDGED = ['chelsea_grey.png', 'retina.jpg', 'cell.png', 'clock_motion.png', 'coffee.png'];

beforeAll(async () => {
  await ensureModelFiles('nanodet', detectorSettingsFromEnvironment().modelCache);
}, 300_000);

describe('honest labels', () => {
  test('the greyscale cat photo gets no label at 80 or above but Cat (it got Dog 97 with one curve for every class)', async () => {
    // Act
    const { labels } = await detectWith('centernet', [fixture('chelsea_grey.png')]);

    // Assert
    expect(sureLeaves(labels[0]).map((l) => l.split(' ')[0])).toEqual(['Cat']);
  });

  test.each(DETECTOR_MODELS)(
    '%s: on the photos one curve mislabelled, each label at 80 or above is one a person named there',
    async (name) => {
      // Arrange
      const detector = await loadDetector(name as DetectorModelName, detectorSettingsFromEnvironment().modelCache);

      // Act
      const wrong: string[] = [];
      const found: string[] = [];
      for (const image of JUDGED) {
        const photo = LABELLED[image] ?? { labels: [] };
        const labels = toLabels(await detector.detect(fixture(image)), { minConfidence: 80, maxLabels: 1000 }, MODEL_SCALES[name]);
        for (const label of sureLeaves(labels)) {
          const labelName = label.slice(0, label.lastIndexOf(' '));
          if (!photo.labels.includes(labelName) && !(photo.acceptable ?? []).includes(labelName)) wrong.push(`${image}: ${label}`);
          else found.push(`${image}: ${labelName}`);
        }
      }

      // Assert: and the right ones are still found (recall is not bought with precision)
      expect(wrong).toEqual([]);
      expect(found).toEqual(expect.arrayContaining(['chelsea_grey.png: Cat', 'coffee.png: Cup']));
    },
  );
});

describe('the model', () => {
  test('nanodet: the endpoint answers with NanoDet, and the cat photos are cats at 80 or above', async () => {
    // Act
    const { version, labels } = await detectWith('nanodet', [fixture('chelsea.png'), fixture('chelsea_grey.png')]);

    // Assert
    expect(version).toMatch(/^local:nanodet-m-416-coco80\//);
    expect(labels.map((l) => (l.find((x) => x.Name === 'Cat')?.Confidence ?? 0) >= 80)).toEqual([true, true]);
  });

  test('an unknown ICECAT_DETECTOR_MODEL stops npm start with one line naming the known models', async () => {
    // Arrange
    const dataDir = mkdtempSync(path.join(tmpdir(), 'icecat-model-'));

    // Act
    const child = spawn(process.execPath, ['--import', 'tsx', 'local/stack/start.ts'], {
      cwd: ROOT,
      env: { ...process.env, ICECAT_DETECTOR_MODEL: 'yolo', ICECAT_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // A start that does not stop is a stack running: it is stopped, and the test fails on its output.
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(timer);
    rmSync(dataDir, { recursive: true, force: true });

    // Assert
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      'The local stack failed to start: environment variable ICECAT_DETECTOR_MODEL must be one of centernet, nanodet, got "yolo"',
    ]);
  });
});
