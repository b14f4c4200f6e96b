import { completionTime, detectorName, jsonFloat, MegaDetectorEncoder } from '../../lib/export/megadetector';
import type { ExportImage } from '../../lib/export/rows';
import { exportChunks } from '../../lib/export/writer';
import { interpretLabels } from '../../lib/ingest/detect';
import { toImage, toImageItem } from '../../lib/store/table/attributes';
import { LIMITS } from '../../lib/store/table/schema';
import { megadetectorProblems } from '../helpers/megadetector-rules';

const T = Date.UTC(2024, 5, 1, 6, 30, 5);
const box = (left: number, top: number, width: number, height: number) => ({ left, top, width, height });

const image = (over: Partial<ExportImage> = {}): ExportImage => ({
  fprint: 'f0',
  fileName: 'cam1/IMG_0001.JPG',
  status: 'success',
  isCat: true,
  labels: [{ name: 'Cat', confidence: 100 }],
  uploadedAt: T,
  classifiedAt: T,
  duplicates: 0,
  duplicateFiles: [],
  error: null,
  cats: [{ confidence: 100, box: box(0.1, 0.2, 0.3, 0.4) }],
  boxes: [],
  width: 640,
  height: 480,
  model: { name: 'rekognition-detect-labels', version: '3.0' },
  ...over,
});

async function fileOf(
  pages: ExportImage[][],
  context = { catMinConfidence: 80, doneAt: T },
): Promise<{ text: string; rows: number; chunks: number }> {
  let text = '';
  let rows = 0;
  let chunks = 0;
  async function* source() {
    for (const page of pages) yield page;
  }
  for await (const c of exportChunks(source(), 'megadetector', context)) {
    text += c.text;
    rows += c.rows;
    chunks++;
  }
  return { text, rows, chunks };
}

describe('jsonFloat', () => {
  it('writes whole numbers with a fraction, as Python writes a float', () => {
    expect([jsonFloat(1), jsonFloat(0), jsonFloat(0.5), jsonFloat(0.97456)]).toEqual(['1.0', '0.0', '0.5', '0.97456']);
  });

  it('drops float noise past six decimals', () => {
    expect(jsonFloat(95.12 / 100)).toBe('0.9512');
  });
});

describe('the MegaDetector results file', () => {
  it('follows the format 1.6 rules for a batch with a cat, a dog and a person, an empty image, a failure, one pending, a duplicate', async () => {
    const pages = [
      [
        image({ duplicates: 1, duplicateFiles: ['cam2/copy.JPG'] }),
        image({
          fprint: 'f1',
          fileName: 'cam1/IMG_0002.JPG',
          isCat: false,
          cats: [],
          boxes: [
            { name: 'Dog', confidence: 88.5, box: box(0.5, 0.5, 0.6, 0.2) },
            { name: 'Person', confidence: 41, box: box(0, 0, 1, 1) },
          ],
        }),
      ],
      [
        image({ fprint: 'f2', fileName: 'empty.jpg', isCat: false, cats: [], boxes: [] }),
        image({
          fprint: 'fail-1',
          fileName: 'broken.jpg',
          status: 'fail',
          isCat: null,
          error: { code: 'CorruptImage' },
          cats: undefined,
          boxes: undefined,
          width: undefined,
          height: undefined,
        }),
        image({ fprint: 'f3', fileName: 'late.jpg', status: 'processing', isCat: null, cats: undefined, boxes: undefined }),
      ],
    ];

    const { text, rows } = await fileOf(pages);
    const file = JSON.parse(text);

    expect(megadetectorProblems(text)).toEqual([]);
    expect(rows).toBe(6);
    expect(file.info).toEqual({
      format_version: '1.6',
      detector: 'Amazon Rekognition DetectLabels 3.0',
      detection_completion_time: '2024-06-01 06:30:05',
      detector_metadata: { typical_detection_threshold: 0.8 },
    });
    expect(file.detection_categories).toEqual({ '1': 'cat', '2': 'dog', '3': 'person' });
    expect(file.images).toEqual([
      { file: 'cam1/IMG_0001.JPG', detections: [{ category: '1', conf: 1, bbox: [0.1, 0.2, 0.3, 0.4] }], width: 640, height: 480 },
      { file: 'cam2/copy.JPG', detections: [{ category: '1', conf: 1, bbox: [0.1, 0.2, 0.3, 0.4] }], width: 640, height: 480 },
      {
        file: 'cam1/IMG_0002.JPG',
        detections: [
          // A box reaching past the image's edge is cut at it.
          { category: '2', conf: 0.885, bbox: [0.5, 0.5, 0.5, 0.2] },
          { category: '3', conf: 0.41, bbox: [0, 0, 1, 1] },
        ],
        width: 640,
        height: 480,
      },
      { file: 'empty.jpg', detections: [], width: 640, height: 480 },
      { file: 'broken.jpg', failure: 'CorruptImage', detections: null },
      { file: 'late.jpg', failure: 'NotProcessedYet', detections: null, width: 640, height: 480 },
    ]);
  });

  it('writes a confidence of 1 as 1.0 and a box side of 0 as 0.0 in the text', async () => {
    const { text } = await fileOf([[image({ cats: [{ confidence: 100, box: box(0, 0, 1, 1) }] })]]);

    expect(text).toContain('"conf": 1.0, "bbox": [0.0, 0.0, 1.0, 1.0]');
    expect(text).toContain('"typical_detection_threshold": 0.8');
  });

  it('writes format_version as a string and never category "0"', async () => {
    const { text } = await fileOf([[image({ boxes: [{ name: 'Car', confidence: 50, box: box(0, 0, 0.1, 0.1) }] })]]);

    expect(text).toContain('"format_version": "1.6"');
    expect(Object.keys(JSON.parse(text).detection_categories)).toEqual(['1', '2']);
  });

  it('is an empty but valid file for a batch with no images, without a completion time while not done', async () => {
    const { text } = await fileOf([], { catMinConfidence: 80 } as { catMinConfidence: number; doneAt: number });

    expect(megadetectorProblems(text)).toEqual([]);
    expect(JSON.parse(text)).toEqual({
      images: [],
      detection_categories: { '1': 'cat' },
      info: { format_version: '1.6', detector: 'unknown', detector_metadata: { typical_detection_threshold: 0.8 } },
    });
  });

  it('streams: one chunk per page between its start and its end', async () => {
    const pages = Array.from({ length: 5 }, (_, p) =>
      Array.from({ length: 3 }, (_, i) => image({ fprint: `f${p}-${i}`, fileName: `${p}-${i}.jpg` })),
    );

    const { text, chunks, rows } = await fileOf(pages);

    expect([chunks, rows]).toEqual([7, 15]);
    expect(JSON.parse(text).images).toHaveLength(15);
  });

  it("carries a person's verdict as the entry's review, its duplicates' too, and still follows the rules", async () => {
    const { text } = await fileOf([
      [
        image({ isCat: false, review: { isCat: false, note: 'a statue' }, duplicates: 1, duplicateFiles: ['copy.jpg'] }),
        image({ fprint: 'f9', fileName: 'other.jpg' }),
      ],
    ]);
    const entries = JSON.parse(text).images;

    expect(megadetectorProblems(text)).toEqual([]);
    expect(entries.map((e: { review?: unknown }) => e.review ?? null)).toEqual([{ isCat: false }, { isCat: false }, null]);
  });

  it('names the local detector by its model and version and Rekognition by its LabelModelVersion', () => {
    expect(detectorName({ name: 'centernet-mobilenetv3-coco80', version: '3.3.6+mapping.2' })).toBe(
      'centernet-mobilenetv3-coco80 3.3.6+mapping.2',
    );
    expect(detectorName({ name: 'rekognition-detect-labels', version: '3.0' })).toBe('Amazon Rekognition DetectLabels 3.0');
    expect(detectorName({ name: 'unknown', version: 'unknown' })).toBe('unknown');
  });

  it('writes the completion time as YYYY-MM-DD HH:MM:SS in UTC', () => {
    expect(completionTime(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe('2026-01-02 03:04:05');
  });

  it('keeps nothing per image: what it holds for the end is the same after 10 images and after 20,000', () => {
    const encoderAfter = (n: number) => {
      const encoder = new MegaDetectorEncoder({ catMinConfidence: 80, doneAt: T });
      const boxes = [
        { name: 'Dog', confidence: 90, box: box(0.1, 0.1, 0.2, 0.2) },
        { name: 'Person', confidence: 80, box: box(0.5, 0.5, 0.2, 0.2) },
      ];
      for (let i = 0; i < n; i++) encoder.image(image({ fprint: `f${i}`, fileName: `IMG_${i}.JPG`, boxes }));
      return encoder.footer();
    };
    // The categories and the detectors seen: bounded by the labels and models, not by the batch.
    expect(encoderAfter(20_000)).toBe(encoderAfter(10));
  });

  it('tells a file that breaks the rules (the checker can fail)', () => {
    expect(
      megadetectorProblems(
        '{"info": {"format_version": 1.6}, "images": [{"file": "a", "failure": "x", "detections": []}], "detection_categories": {"1": "cat"}}',
      ),
    ).toEqual(['format_version is not a string', 'image 0 has a failure but detections [], not null']);
    expect(
      megadetectorProblems(
        '{"info": {"format_version": "1.6"}, "images": [{"file": "a", "detections": [{"category": "1", "conf": 1, "bbox": [0, 0, 1, 1]}]}], "detection_categories": {"1": " "}}',
      ),
    ).toEqual(['category 1 has a blank name', 'conf 1 is written as an integer']);
  });
});

describe('the ingest keeps the boxes of the labels other than Cat', () => {
  const instance = (confidence: number) => ({ Confidence: confidence, BoundingBox: { Left: 0.1, Top: 0.2, Width: 0.3, Height: 0.4 } });

  it("with the model, most confident first; Cat's stay in cats", () => {
    const out = interpretLabels(
      {
        LabelModelVersion: '3.0',
        Labels: [
          { Name: 'Cat', Confidence: 91, Instances: [instance(91)] },
          { Name: 'Dog', Confidence: 85, Instances: [instance(60), instance(85)] },
          { Name: 'Animal', Confidence: 91, Instances: [] },
        ],
      },
      80,
    );

    expect(out.cats).toHaveLength(1);
    expect(out.detections).toEqual({
      model: '3.0',
      boxes: [85, 60].map((confidence) => ({ name: 'Dog', confidence, box: { left: 0.1, top: 0.2, width: 0.3, height: 0.4 } })),
    });
  });

  it(`keeps at most ${LIMITS.otherBoxes} of them, the most confident`, () => {
    const many = Array.from({ length: 40 }, (_, i) => instance(40 + i));
    const out = interpretLabels({ Labels: [{ Name: 'Person', Confidence: 79, Instances: many }] }, 80);

    const kept = out.detections.boxes;
    expect(kept).toHaveLength(LIMITS.otherBoxes);
    expect(Math.min(...kept.map((b) => b.confidence))).toBe(40 + 40 - LIMITS.otherBoxes);
  });

  it('stores them as one compact string and reads them back', () => {
    const image = { clientId: 'c', batchId: 'b', fprint: 'f', status: 'success' as const, expiresAt: 1 };
    const detections = { model: 'm', boxes: [{ name: 'Dog', confidence: 85.5, box: { left: 0.1, top: 0.2, width: 0.3, height: 0.4 } }] };

    const item = toImageItem({ ...image, detections }) as unknown as Record<string, unknown>;

    expect(typeof item.rek_dets).toBe('string');
    expect(toImage(item).detections).toEqual(detections);
    expect(toImage({ ...item, rek_dets: 'garbage' }).detections).toBeUndefined();
  });
});
