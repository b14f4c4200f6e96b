// NanoDet's raw outputs decoded into detections on the original image. Pure, so it is tested without the model.
// The model (nanodet-m, 416×416 input) answers, for each of three strides (8, 16, 32: a 52², 26² and 13² grid), one
// row per grid cell of 80 class scores (already sigmoid, 0..1) and one row of 4 × 11 box logits: for each side of the
// box (left, top, right, bottom) a distribution over the distances 0..10 strides from the cell's centre (the GFL
// head). The distance is the distribution's expected value (softmax of the logits), as NanoDet's own decoder reads it.
import { type DecodeOptions, type Letterbox, suppressOverlaps, toOriginalBox } from './decode';
import type { FoundObject } from './labels';

/** Bins per side of the box distribution (distances 0..10 strides). */
export const NANODET_BINS = 11;

/** One stride's outputs: `scores` (cells × classes) and `boxes` (cells × 4 × NANODET_BINS), row-major. */
export interface NanoDetLevel {
  stride: number;
  scores: ArrayLike<number>;
  boxes: ArrayLike<number>;
}

/** The expected bin of one side's distribution: softmax(logits) · [0, 1, …, bins − 1]. */
export function expectedDistance(logits: ArrayLike<number>, offset: number, bins = NANODET_BINS): number {
  let max = -Infinity;
  for (let j = 0; j < bins; j++) max = Math.max(max, logits[offset + j] as number);
  let sum = 0;
  let weighted = 0;
  for (let j = 0; j < bins; j++) {
    const e = Math.exp((logits[offset + j] as number) - max);
    sum += e;
    weighted += e * j;
  }
  return weighted / sum;
}

/** Candidates kept per image before suppression: the best scores only, so the suppression stays cheap. */
const MAX_CANDIDATES = 200;

/**
 * The detections of every stride: each cell's classes scoring at least `minScore`, with the cell's box (input pixels)
 * mapped back through the letterbox; the best MAX_CANDIDATES, overlaps suppressed within each class.
 */
export function decodeNanoDet(levels: NanoDetLevel[], lb: Letterbox, opts: DecodeOptions): FoundObject[] {
  const candidates: FoundObject[] = [];
  for (const { stride, scores, boxes } of levels) {
    const grid = Math.round(lb.size / stride);
    for (let cell = 0; cell < grid * grid; cell++) {
      for (let c = 0; c < opts.classCount; c++) {
        const score = scores[cell * opts.classCount + c] as number;
        if (!(score >= opts.minScore)) continue;
        const cx = ((cell % grid) + 0.5) * stride;
        const cy = (Math.floor(cell / grid) + 0.5) * stride;
        const base = cell * 4 * NANODET_BINS;
        const [l, t, r, b] = [0, 1, 2, 3].map((side) => expectedDistance(boxes, base + side * NANODET_BINS) * stride) as [
          number,
          number,
          number,
          number,
        ];
        const box = toOriginalBox(cx - l, cy - t, cx + r, cy + b, lb);
        if (box.Width > 0 && box.Height > 0) candidates.push({ classIndex: c, score, box });
      }
    }
  }
  candidates.sort((a, b) => b.score - a.score);
  return suppressOverlaps(candidates.slice(0, MAX_CANDIDATES), opts.iouThreshold);
}
