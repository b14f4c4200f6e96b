// Geometry between the original image and the model's square letterboxed input, and the decoding of
// the model's raw detections into boxes on the original image. Pure, so it is tested without the model.
import type { BoundingBox, FoundObject } from './labels';

/** Where the resized image sits inside the square input: its size and the padding left and above it. */
export interface Letterbox {
  size: number;
  width: number;
  height: number;
  padLeft: number;
  padTop: number;
}

/** An image already resized to fit (keeping its aspect ratio) centred in the size x size input. */
export function letterbox(width: number, height: number, size: number): Letterbox {
  return { size, width, height, padLeft: Math.floor((size - width) / 2), padTop: Math.floor((size - height) / 2) };
}

const clamp01 = (v: number): number => Math.min(1, Math.max(0, v));
/** Six decimals: a millionth of the image is below a pixel for any image Rekognition accepts. */
const round6 = (v: number): number => Math.round(v * 1e6) / 1e6;

/** A box in input pixels (x1, y1, x2, y2) as ratios of the original image, clipped to it. */
export function toOriginalBox(x1: number, y1: number, x2: number, y2: number, lb: Letterbox): BoundingBox {
  const left = clamp01((x1 - lb.padLeft) / lb.width);
  const top = clamp01((y1 - lb.padTop) / lb.height);
  const right = clamp01((x2 - lb.padLeft) / lb.width);
  const bottom = clamp01((y2 - lb.padTop) / lb.height);
  return {
    Left: round6(left),
    Top: round6(top),
    Width: round6(Math.max(0, right - left)),
    Height: round6(Math.max(0, bottom - top)),
  };
}

export function iou(a: BoundingBox, b: BoundingBox): number {
  const ix = Math.max(0, Math.min(a.Left + a.Width, b.Left + b.Width) - Math.max(a.Left, b.Left));
  const iy = Math.max(0, Math.min(a.Top + a.Height, b.Top + b.Height) - Math.max(a.Top, b.Top));
  const inter = ix * iy;
  const union = a.Width * a.Height + b.Width * b.Height - inter;
  return union > 0 ? inter / union : 0;
}

/** Greedy non-maximum suppression within each class: the heatmap yields near-duplicate boxes. */
export function suppressOverlaps(detections: FoundObject[], iouThreshold: number): FoundObject[] {
  const kept: FoundObject[] = [];
  for (const d of [...detections].sort((a, b) => b.score - a.score)) {
    const overlaps = kept.some((k) => k.classIndex === d.classIndex && iou(k.box, d.box) > iouThreshold);
    if (!overlaps) kept.push(d);
  }
  return kept;
}

export interface DecodeOptions {
  /** Scores below this (0..1) are dropped before suppression. */
  minScore: number;
  iouThreshold: number;
  classCount: number;
}

/**
 * CenterNet's `detections` rows ([x1, y1, x2, y2, score, class] in input pixels) as detections on the
 * original image: low scores, unknown classes and empty boxes dropped, overlaps suppressed.
 */
export function decodeCenterNet(rows: number[][], lb: Letterbox, opts: DecodeOptions): FoundObject[] {
  const detections: FoundObject[] = [];
  for (const row of rows) {
    const [x1, y1, x2, y2, score, cls] = row as [number, number, number, number, number, number];
    if (!(score >= opts.minScore)) continue;
    const classIndex = Math.round(cls);
    if (!Number.isInteger(classIndex) || classIndex < 0 || classIndex >= opts.classCount) continue;
    const box = toOriginalBox(x1, y1, x2, y2, lb);
    if (box.Width <= 0 || box.Height <= 0) continue;
    detections.push({ classIndex, score, box });
  }
  return suppressOverlaps(detections, opts.iouThreshold);
}
