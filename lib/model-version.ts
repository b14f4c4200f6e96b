// Which model gave an answer, and whether it is the one answering now (docs/decisions/0031-model-versions.md). Pure:
// DetectLabels' LabelModelVersion read as {name, version}, a record's model (written, or read from what a record
// written before models were kept holds), and the one comparison every reader makes (reuse, fingerprints:known, the
// re-detection).
import type { Detections, ModelVersion } from './domain/detection';
import type { Image } from './domain/image';

/** The name Rekognition's answers carry; their version is DetectLabels' LabelModelVersion ("3.0"). */
export const REKOGNITION_MODEL_NAME = 'rekognition-detect-labels';

/** What a model nobody named reads as: never the current one. */
export const UNKNOWN_MODEL: ModelVersion = { name: 'unknown', version: 'unknown' };

/**
 * The local detector's LabelModelVersion: `local:<name>/<file version>+mapping.<mapping version>`, e.g.
 * `local:centernet-mobilenetv3-coco80/3.3.6+mapping.2`: the name, then the version of the package shipping the model
 * file and the version of the confidence mapping onto Rekognition's scale (local/detector/object-detector.ts forms it).
 */
const LOCAL_FORM = /^local:([^/\s]+)\/(\S+\+mapping\.\S+)$/;

/** What the local detector answered before it named its mapping: `<name> (@vladmandic/human <version>, local)`. */
const LEGACY_LOCAL_FORM = /^(\S+) \(@vladmandic\/human (\S+), local\)$/;

/**
 * The local confidence mapping's versions by the time they took effect, as the history of local/detector/ shows:
 * 1, the model's score × 100 (from the detector's first commit); 2, the piecewise-linear scale onto Rekognition's
 * (commit b65697e, 2026-11-25 16:30:06 UTC). Only records in the legacy form need this: later ones name their mapping.
 */
const LEGACY_LOCAL_MAPPINGS: readonly { version: number; from: number }[] = [
  { version: 1, from: 0 },
  { version: 2, from: Date.parse('2026-11-25T16:30:06Z') },
];

/** The mapping version a legacy local answer classified at `classifiedAt` (epoch ms) was made with. */
export function legacyMappingAt(classifiedAt: number): number {
  let version = LEGACY_LOCAL_MAPPINGS[0]!.version;
  for (const m of LEGACY_LOCAL_MAPPINGS) if (classifiedAt >= m.from) version = m.version;
  return version;
}

/**
 * DetectLabels' LabelModelVersion as {name, version}. `classifiedAt` (epoch ms) dates a legacy local answer, which
 * did not name its mapping; without it such an answer's mapping is unknown.
 */
export function parseModelVersion(labelModelVersion: string | undefined, classifiedAt?: number): ModelVersion {
  if (labelModelVersion === undefined || labelModelVersion === '' || labelModelVersion === 'unknown') return UNKNOWN_MODEL;
  const local = LOCAL_FORM.exec(labelModelVersion);
  if (local) return { name: local[1]!, version: local[2]! };
  const legacy = LEGACY_LOCAL_FORM.exec(labelModelVersion);
  if (legacy) {
    const mapping = classifiedAt === undefined ? 'unknown' : String(legacyMappingAt(classifiedAt));
    return { name: legacy[1]!, version: `${legacy[2]!}+mapping.${mapping}` };
  }
  if (/^\d+(\.\d+)*$/.test(labelModelVersion)) return { name: REKOGNITION_MODEL_NAME, version: labelModelVersion };
  return { name: UNKNOWN_MODEL.name, version: labelModelVersion };
}

/** What a record says of its model: the model it keeps, else (written before) its boxes' model string and its time. */
export interface RecordModelFacts {
  model?: ModelVersion;
  detections?: Pick<Detections, 'model'>;
  classifiedAt?: number;
}

/**
 * The model that answered a record. A record written before records kept `model` reads as the model that answered
 * then: its boxes' LabelModelVersion (rek_dets), a legacy local one dated by its classification time (a reused copy
 * keeps its original's time); a record with neither reads as unknown.
 */
export const modelOfRecord = (record: RecordModelFacts): ModelVersion =>
  record.model ?? parseModelVersion(record.detections?.model, record.classifiedAt);

/**
 * The model an image's answer came from: the model it keeps; else, written before records kept it, its boxes'
 * LabelModelVersion or its labels' one, dated by its classification (the re-detection's `prev`, the changes listing,
 * the audit's models).
 */
export const answerModelOf = (image: Pick<Image, 'model' | 'detection' | 'detections' | 'classifiedAt'>): ModelVersion => {
  const detections = image.detections ?? image.detection;
  return modelOfRecord({
    ...(image.model ? { model: image.model } : {}),
    ...(detections ? { detections } : {}),
    ...(image.classifiedAt !== undefined ? { classifiedAt: image.classifiedAt } : {}),
  });
};

/** Whether two models are the same one; an unknown model is nobody's. */
export const sameModel = (a: ModelVersion | undefined, b: ModelVersion | undefined): boolean =>
  a !== undefined && b !== undefined && a.name !== UNKNOWN_MODEL.name && a.name === b.name && a.version === b.version;

/**
 * THE comparison: whether a record was answered by the model that would answer now. No current model known (none
 * answered yet) is never a match: an answer is reused only when its model is known to be the current one.
 */
export const answeredByCurrentModel = (record: RecordModelFacts, current: ModelVersion | undefined): boolean =>
  sameModel(modelOfRecord(record), current);

/** A model as one token: `name@version` (the exports' model column). */
export const modelText = (m: ModelVersion): string => `${m.name}@${m.version}`;
