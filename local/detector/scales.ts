// Each model's mapping of its scores onto Rekognition's scale, class by class. A label whose fixtures proved it
// (test/fixtures/labels.json: seen where a person named it, and kept apart from where nobody did) has a boundary,
// the score that becomes 80; the curve through it is the one decision 0001 fitted for Cat. A label that never proved
// itself rises to 79 at most: it is recorded, but never at a confidence that the label filters or the cat
// threshold take as sure (docs/decisions/0032-second-local-model.md).
import type { ScaleKnot } from './thresholds';

export interface ModelScale {
  /**
   * The version of this mapping, named in every answer's LabelModelVersion (model-catalog.ts localModelVersion): raise it
   * whenever a boundary or the curve changes, so that answers on the old scale are not reused as current ones
   * (docs/decisions/0031-model-versions.md).
   */
  mappingVersion: string;
  /** The score at which a proven label reaches 80, by Rekognition label name. */
  boundaries: Readonly<Record<string, number>>;
  /** The score at which an unproven label reaches 20 (REKOGNITION_MIN_CONFIDENCE, the label floor). */
  floor: number;
}

/** Where an unproven label ends, at score 1: under the threshold of 80. */
export const UNPROVEN_CEILING = 79;

/** A proven label's knots: 0.75·t → 20, t → 80, three eighths of the way on to 1 → 97 (Cat at 0.20: 0.15, 0.20, 0.50). */
export function provenKnots(boundary: number): ScaleKnot[] {
  return [
    { score: 0, confidence: 0 },
    { score: 0.75 * boundary, confidence: 20 },
    { score: boundary, confidence: 80 },
    { score: boundary + 0.375 * (1 - boundary), confidence: 97 },
    { score: 1, confidence: 100 },
  ];
}

const unprovenKnots = (floor: number): ScaleKnot[] => [
  { score: 0, confidence: 0 },
  { score: floor, confidence: 20 },
  { score: 1, confidence: UNPROVEN_CEILING },
];

/** A score (0..1, clamped; not a number: 0) through the knots, linear between them. */
function throughKnots(knots: readonly ScaleKnot[], score: number): number {
  const s = Math.min(1, Math.max(0, Number.isFinite(score) ? score : 0));
  for (let i = 1; i < knots.length; i++) {
    const lo = knots[i - 1] as ScaleKnot;
    const hi = knots[i] as ScaleKnot;
    if (s <= hi.score) return lo.confidence + ((s - lo.score) / (hi.score - lo.score)) * (hi.confidence - lo.confidence);
  }
  return (knots[knots.length - 1] as ScaleKnot).confidence;
}

/** A label's score on Rekognition's scale under a model's mapping. */
export function labelConfidence(scale: ModelScale, label: string, score: number): number {
  const boundary = scale.boundaries[label];
  return throughKnots(boundary === undefined ? unprovenKnots(scale.floor) : provenKnots(boundary), score);
}

/**
 * The models' mappings. CenterNet's Cat keeps decision 0001's 0.20; every other boundary is fitted by
 * `fitBoundaries` (scale-fit.ts) on the labelled fixtures, as `npm run bench detector` prints it (`fitted`).
 */
export const MODEL_SCALES = {
  centernet: {
    // 1: the score x 100 (until 2026-11-25), 2: decision 0001's curve for every label, 3: a boundary per proven label.
    mappingVersion: '3',
    floor: 0.15,
    boundaries: { Cat: 0.2, Clock: 0.1545, Cup: 0.3716, Horse: 0.3537, Person: 0.4515, Spoon: 0.15 },
  },
  nanodet: {
    mappingVersion: '1',
    floor: 0.15,
    boundaries: { Cat: 0.2978, Clock: 0.4057, Cup: 0.2405, Horse: 0.4237, Person: 0.5574, Spoon: 0.15 },
  },
} as const satisfies Record<string, ModelScale>;
