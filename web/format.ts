// How numbers, times and labels read on the page.
import type { BatchSummary, Box, Image } from './api';

export const percent = (confidence: number): string => `${Math.round(confidence)}%`;

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Files whose outcome is known (classified, failed or a duplicate) against all that arrived or were declared. */
export function progressOf(batch: BatchSummary): { finished: number; of: number } {
  const { success, fail, duplicate, total } = batch.counts;
  return { finished: success + fail + duplicate, of: Math.max(total, batch.expected ?? 0) };
}

/**
 * The image's best labels, by confidence. A cat's always name the Cat label first, so a card's verdict and its labels
 * agree (its Cat label may rank below others, or be missing where a box alone made it a cat).
 */
export function topLabels(image: Image, n = 3): string {
  const names = image.labels
    .slice()
    .sort((a, b) => b.confidence - a.confidence)
    .map((l) => l.name);
  if (image.isCat) return ['Cat', ...names.filter((l) => l.toLowerCase() !== 'cat')].slice(0, n).join(', ');
  return names.slice(0, n).join(', ');
}

/** The cat confidence to show: the API's, else the best "Cat" label's. */
export function catConfidence(image: Image): number | null {
  if (typeof image.catConfidence === 'number') return image.catConfidence;
  const cat = image.labels.find((l) => l.name.toLowerCase() === 'cat');
  return cat ? cat.confidence : null;
}

/**
 * The full-size picture's alt text: what the page around it does not already say (its heading names the file, its
 * table the labels): what is drawn over it.
 */
export function describePicture(image: Image): string {
  if (image.status === 'fail') return 'The upload, which could not be read as an image';
  const boxes = (image.cats ?? []).filter((c) => c.box).length;
  return boxes > 0 ? `The uploaded picture, ${boxes === 1 ? 'its cat outlined' : `its ${boxes} cats outlined`}` : 'The uploaded picture';
}

/**
 * A cat's box in the overlay's 0..100 viewBox. Rekognition's BoundingBox is relative to the image (0..1 from the
 * top-left) and may reach past its edges; the drawn box is cut at them.
 */
export function boxRect(box: Box): { x: number; y: number; width: number; height: number } {
  const clamp = (v: number) => Math.min(100, Math.max(0, v * 100));
  const x = clamp(box.left);
  const y = clamp(box.top);
  return { x, y, width: clamp(box.left + box.width) - x, height: clamp(box.top + box.height) - y };
}

/** A file name cut after each `/`, `_`, `-` and `.`: the only places it may wrap ("cat_", "kitten_", "boxed.", "jpg"). */
export const nameParts = (name: string): string[] => name.split(/(?<=[/_.-])/);

/**
 * A capture time as the camera wrote it: its wall clock, never moved into the reader's zone (a dawn shot reads as
 * dawn), with the camera's offset when it wrote one. "2024-06-01T06:30:00+02:00" reads "2024-06-01 06:30:00 (UTC+02:00)".
 */
export function capturedWhen(capturedAt: string): string {
  const wall = `${capturedAt.slice(0, 10)} ${capturedAt.slice(11, 19)}`;
  const offset = capturedAt.slice(19);
  return offset ? `${wall} (UTC${offset})` : wall;
}

/** A GPS position in degrees, hemispheres named: "47.50000° N, 122.25833° W". */
export function place(location: { lat: number; lon: number }): string {
  const deg = (v: number, pos: string, neg: string) => `${Math.abs(v).toFixed(5)}° ${v < 0 ? neg : pos}`;
  return `${deg(location.lat, 'N', 'S')}, ${deg(location.lon, 'E', 'W')}`;
}

/**
 * A cat badge's words: "Cat 87%" from the detector; "Cat, reviewed" when a person said so (their verdict wins, and the
 * detector's confidence may be anything).
 */
export function catBadge(image: Image): string {
  if (image.review?.isCat) return 'Cat, reviewed';
  const cat = catConfidence(image);
  return cat === null ? 'Cat' : `Cat ${percent(cat)}`;
}
