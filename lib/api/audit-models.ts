// GET …/accuracy's `models` (docs/accuracy.md "Each model on the same sample"): after a re-detection, each model that
// answered the audited images, estimated on the same audited reviews by its own verdicts (lib/review/model-accuracy.ts).

import { type ModelVersion } from '../domain/detection';
import { type Image, machineIsCatOf } from '../domain/image';
import { answerModelOf, modelText } from '../model-version';
import type { AccuracyEstimates } from '../review/accuracy';
import type { ByStratum } from '../review/audit-sample';
import { type AuditedVerdict, estimateModelAccuracy } from '../review/model-accuracy';
import type { AuditedEntry } from '../store/audit/queue';

interface ModelAccuracy extends AccuracyEstimates {
  model: ModelVersion;
  /** Audited images this model answered. */
  sampled: number;
  /** Of them, reviewed: the reviews its estimates rest on. */
  reviewed: number;
}

interface Answer {
  model: ModelVersion;
  verdict: boolean;
}

/** An image's answers: the one it has now, and the one a re-detection replaced when another model gave it. */
function answersOf(image: Image): Answer[] {
  const now: Answer = { model: answerModelOf(image), verdict: machineIsCatOf(image) === true };
  const before = image.previous;
  return before && modelText(before.model) !== modelText(now.model) ? [now, { model: before.model, verdict: before.isCat }] : [now];
}

/**
 * Each model's estimates on the audit sample: `entries` the sample (the draw stratum and the person's verdict), `drawn`
 * the strata's sizes at the draw, `images` the batch's classified images with their answers. The models of the answers
 * the images have now come first, most images first.
 */
export function modelAccuracies(entries: readonly AuditedEntry[], drawn: ByStratum, images: readonly Image[]): ModelAccuracy[] {
  const rows = new Map<string, { model: ModelVersion; population: ByStratum; sampled: number; reviews: AuditedVerdict[]; now: number }>();
  const row = (a: Answer) => {
    const key = modelText(a.model);
    let r = rows.get(key);
    if (!r) rows.set(key, (r = { model: a.model, population: { cat: 0, notCat: 0 }, sampled: 0, reviews: [], now: 0 }));
    return r;
  };
  const byFprint = new Map<string, Answer[]>();
  for (const image of images) {
    const answers = answersOf(image);
    byFprint.set(image.fprint, answers);
    answers.forEach((a, i) => {
      const r = row(a);
      r.population[a.verdict ? 'cat' : 'notCat'] += 1;
      if (i === 0) r.now += 1;
    });
  }
  for (const e of entries)
    for (const a of byFprint.get(e.fprint) ?? []) {
      const r = row(a);
      r.sampled += 1;
      if (e.reviewedCat !== undefined) r.reviews.push({ stratum: e.stratum, truth: e.reviewedCat, verdict: a.verdict });
    }
  return [...rows.values()]
    .filter((r) => r.sampled > 0)
    .sort((a, b) => b.now - a.now || b.population.cat + b.population.notCat - (a.population.cat + a.population.notCat))
    .map((r) => ({
      model: r.model,
      sampled: r.sampled,
      reviewed: r.reviews.length,
      ...estimateModelAccuracy(r.reviews, drawn, r.population),
    }));
}
