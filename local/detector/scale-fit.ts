// Fitting a model's per-label boundaries on labelled photos, and measuring the labels it then gives: precision of
// the labels at 80 or above, recall of the labels a person named, in-sample and leave-one-out. Pure: the scores
// come from the bench (bench/detector.bench.ts), which runs the models.
import { labelConfidence, type ModelScale } from './scales';

const SURE = 80;

/** One labelled photo: each label's best score on it, and what a person named. */
export interface Observation {
  image: string;
  /** Best score (0..1) of each label the model gave, by label name. */
  scores: Readonly<Record<string, number>>;
  /** The labels a person named. */
  labels: readonly string[];
  /** True of the photo but not named: neither a miss nor a wrong label. */
  acceptable?: readonly string[];
  /** Photos made from one another (a cat photo and its greyscale copy) share a group: leave-one-out leaves out the group. */
  group?: string;
}

/** Highest boundary a fit gives. The lowest is the model's label floor: a score under it is not even recorded as a guess. */
const MAX_BOUNDARY = 0.95;
/** How far above the best score where a label is wrong its boundary goes when the photos do not separate it. */
const ABOVE_WRONG = 0.01;

const round4 = (v: number): number => Math.round(v * 1e4) / 1e4;

/**
 * Each named label's boundary: midway between its weakest score where it was named and its best score where it is
 * wrong; just above the latter when they overlap (no wrong label reaches 80, some right ones fall under it). A label
 * never named, or named but never scored, gets none (unproven). No boundary is under `floor`, the score at which an
 * unproven label reaches 20 (a right label scoring under it stays under 80). `fixed` boundaries are kept as given.
 */
export function fitBoundaries(
  observations: readonly Observation[],
  fixed: Readonly<Record<string, number>> = {},
  floor = 0.15,
): Record<string, number> {
  const named = new Set(observations.flatMap((o) => o.labels));
  const boundaries: Record<string, number> = {};
  for (const label of named) {
    const fixedBoundary = fixed[label];
    if (fixedBoundary !== undefined) {
      boundaries[label] = fixedBoundary;
      continue;
    }
    const right = observations.filter((o) => o.labels.includes(label)).map((o) => o.scores[label] ?? 0);
    const wrong = observations
      .filter((o) => !o.labels.includes(label) && !(o.acceptable ?? []).includes(label))
      .map((o) => o.scores[label] ?? 0);
    const weakestRight = Math.min(...right);
    if (!(weakestRight > 0)) continue;
    const bestWrong = Math.max(0, ...wrong);
    const boundary = weakestRight > bestWrong ? (weakestRight + bestWrong) / 2 : bestWrong + ABOVE_WRONG;
    boundaries[label] = round4(Math.min(MAX_BOUNDARY, Math.max(floor, boundary)));
  }
  for (const [label, boundary] of Object.entries(fixed)) boundaries[label] ??= boundary;
  return boundaries;
}

interface LabelQuality {
  /** Labels at 80 or above, and how many of them were named or acceptable. */
  sure: number;
  right: number;
  /** right / sure; null when no label reached 80. */
  precision: number | null;
  /** Labels named, and how many of them reached 80. */
  named: number;
  found: number;
  recall: number | null;
  /** The labels at 80 or above that were wrong, as "image: Label 93.1". */
  wrong: string[];
}

const ratio = (a: number, b: number): number | null => (b === 0 ? null : round4(a / b));

/** The labels each photo gets under `scaleOf(photo)` at 80 or above, against what a person named. */
export function labelQuality(observations: readonly Observation[], scaleOf: (o: Observation) => ModelScale): LabelQuality {
  let sure = 0;
  let right = 0;
  let named = 0;
  let found = 0;
  const wrong: string[] = [];
  for (const o of observations) {
    const scale = scaleOf(o);
    const confidence = (label: string): number => labelConfidence(scale, label, o.scores[label] ?? 0);
    for (const label of Object.keys(o.scores)) {
      if (confidence(label) < SURE) continue;
      sure += 1;
      if (o.labels.includes(label) || (o.acceptable ?? []).includes(label)) right += 1;
      else wrong.push(`${o.image}: ${label} ${confidence(label).toFixed(1)}`);
    }
    named += o.labels.length;
    found += o.labels.filter((label) => confidence(label) >= SURE).length;
  }
  return { sure, right, precision: ratio(right, sure), named, found, recall: ratio(found, named), wrong };
}

/** Each of `judged` under boundaries fitted on `observations` without its group (`fixed` ones kept). */
export function leaveOneOut(
  judged: readonly Observation[],
  observations: readonly Observation[],
  base: ModelScale,
  fixed: Readonly<Record<string, number>> = {},
): LabelQuality {
  return labelQuality(judged, (held) => ({
    ...base,
    boundaries: fitBoundaries(
      observations.filter((o) => (o.group ?? o.image) !== (held.group ?? held.image)),
      fixed,
      base.floor,
    ),
  }));
}
