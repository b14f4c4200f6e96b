// The MegaDetector results file, format 1.6 (lila.science/megadetector-output-format), written one image record at a
// time so a batch of any size streams in flat memory. Category ids are given as labels first appear: "1" is always
// cat, then "2", "3", … for each other label that has a box, in lower case. So that no second pass over the batch is
// needed, `images` comes first and `detection_categories` and `info` after it: a JSON object's members are unordered,
// and MegaDetector's validator, Timelapse and AddaxAI read the file whole.

import type { ModelVersion } from '../domain/detection';
import { modelText, REKOGNITION_MODEL_NAME, UNKNOWN_MODEL } from '../model-version';
import type { ExportBox, ExportImage } from './rows';

export interface MegaDetectorContext {
  /** The batch's cat threshold, 0–100: typical_detection_threshold is it / 100. */
  catMinConfidence: number;
  /** Epoch ms the batch became done; detection_completion_time when set. */
  doneAt?: number;
}

const MEGADETECTOR_FORMAT_VERSION = '1.6';
/** MegaDetector's failure string for a file not classified yet. */
const NOT_PROCESSED_YET = 'NotProcessedYet';
const CAT_CATEGORY = '1';

/**
 * A number as MegaDetector's Python writes a float: always with a fraction (`1.0`, `0.0`, never `1`), since its
 * validator and readers check `isinstance(conf, float)` and JSON keeps `1.0` a float only when written so.
 * Written by toFixed and trimmed, the same text as String(n) at six decimals: String() of a number with a fraction
 * allocates its text in V8's old space (rows.ts numberText), so every box's numbers were old-space garbage (the
 * 20,000-image MegaDetector export's old space ended at 19 MB instead of 16; docs/design.md, "Export memory").
 */
export function jsonFloat(n: number): string {
  const rounded = Math.round(n * 1e6) / 1e6;
  if (Number.isInteger(rounded)) return rounded.toFixed(1);
  const fixed = rounded.toFixed(6);
  let end = fixed.length;
  while (fixed.charCodeAt(end - 1) === 48 /* '0' */) end--;
  return fixed.slice(0, end);
}

const clamp01 = (n: number): number => Math.min(1, Math.max(0, n));

/** `[x_min, y_min, width, height]` relative to the image, origin top left, kept inside the image. */
function bbox(b: ExportBox['box']): string {
  const x = clamp01(b.left);
  const y = clamp01(b.top);
  const w = Math.min(clamp01(b.width), 1 - x);
  const h = Math.min(clamp01(b.height), 1 - y);
  return `[${[x, y, w, h].map(jsonFloat).join(', ')}]`;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** MegaDetector's `datetime`: a capture time's wall clock (`2024-06-01T06:30:00+02:00`) as `YYYY:MM:DD HH:MM:SS`. */
const megadetectorDatetime = (capturedAt: string): string => `${capturedAt.slice(0, 10).replace(/-/g, ':')} ${capturedAt.slice(11, 19)}`;

/** `YYYY-MM-DD HH:MM:SS` in UTC: MegaDetector's detection_completion_time. */
export function completionTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/**
 * The detector that answered, as the records name its model (lib/model-version.ts): Rekognition by its
 * LabelModelVersion ("Amazon Rekognition DetectLabels 3.0"), a local model by its name and version.
 */
export function detectorName(model: ModelVersion | undefined): string {
  if (model === undefined || model.name === UNKNOWN_MODEL.name) return 'unknown';
  return model.name === REKOGNITION_MODEL_NAME ? `Amazon Rekognition DetectLabels ${model.version}` : `${model.name} ${model.version}`;
}

export class MegaDetectorEncoder {
  /** Category name → id; cat is "1". */
  private readonly categories = new Map<string, string>([['cat', CAT_CATEGORY]]);
  private readonly models = new Map<string, ModelVersion>();
  private entries = 0;

  constructor(private readonly context: MegaDetectorContext) {}

  readonly header = '{"images": [\n';

  private categoryOf(name: string): string {
    const key = name.toLowerCase();
    let id = this.categories.get(key);
    if (id === undefined) {
      id = String(this.categories.size + 1);
      this.categories.set(key, id);
    }
    return id;
  }

  private detections(image: ExportImage): string {
    const parts: string[] = [];
    for (const c of image.cats ?? []) parts.push(this.detection(CAT_CATEGORY, c));
    for (const b of image.boxes ?? []) {
      if (b.name.toLowerCase() === 'cat') continue;
      parts.push(this.detection(this.categoryOf(b.name), b));
    }
    return parts.length ? `[${parts.join(', ')}]` : '[]';
  }

  private detection(category: string, b: { confidence: number; box: ExportBox['box'] }): string {
    return `{"category": "${category}", "conf": ${jsonFloat(b.confidence / 100)}, "bbox": ${bbox(b.box)}}`;
  }

  /** An entry's members after `file`: its detections or its failure, its size and capture time when known. */
  private outcome(image: ExportImage): string {
    let text: string;
    if (image.status === 'fail') text = `"failure": ${JSON.stringify(image.error?.code ?? 'Failed')}, "detections": null`;
    else if (image.status !== 'success') text = `"failure": "${NOT_PROCESSED_YET}", "detections": null`;
    else text = `"detections": ${this.detections(image)}`;
    if (typeof image.width === 'number' && typeof image.height === 'number') text += `, "width": ${image.width}, "height": ${image.height}`;
    if (image.capturedAt) text += `, "datetime": ${JSON.stringify(megadetectorDatetime(image.capturedAt))}`;
    if (image.review && typeof image.review.isCat === 'boolean') text += `, "review": {"isCat": ${image.review.isCat}}`;
    return text;
  }

  /**
   * One entry per uploaded file: the record's, then one per duplicate upload with the original's detections. Uploads
   * counted past the names a record keeps have no file name to give, so they have no entry.
   */
  image(image: ExportImage): { text: string; rows: number } {
    if (image.model) this.models.set(modelText(image.model), image.model);
    const outcome = this.outcome(image);
    const files = [image.fileName ?? image.fprint, ...image.duplicateFiles.slice(0, Math.max(image.duplicates, 0))];
    let text = '';
    for (const file of files) {
      text += `${this.entries++ === 0 ? '' : ',\n'}{"file": ${JSON.stringify(file)}, ${outcome}}`;
    }
    return { text, rows: files.length };
  }

  footer(): string {
    const categories = [...this.categories].map(([name, id]) => `${JSON.stringify(id)}: ${JSON.stringify(name)}`).join(', ');
    const models = [...this.models].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, m]) => m);
    const info = [
      `"format_version": "${MEGADETECTOR_FORMAT_VERSION}"`,
      `"detector": ${JSON.stringify(models.length ? models.map(detectorName).join(', ') : 'unknown')}`,
      ...(this.context.doneAt !== undefined ? [`"detection_completion_time": "${completionTime(this.context.doneAt)}"`] : []),
      `"detector_metadata": {"typical_detection_threshold": ${jsonFloat(this.context.catMinConfidence / 100)}}`,
    ];
    return `\n],\n"detection_categories": {${categories}},\n"info": {${info.join(', ')}}}\n`;
  }
}
