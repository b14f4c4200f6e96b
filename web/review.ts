// Review mode's queue (DESIGN §10), kept as pure functions so its rules are unit-tested without a browser: the
// unreviewed images in the API's order (uncertain first), the verdicts given here (the last one undone first) and the
// images skipped (offered again once the queue runs out).
import type { BatchCounts, Image } from './api';

interface GivenVerdict {
  image: Image;
  isCat: boolean;
}

export interface ReviewQueue {
  /** Unreviewed images still to show, the current one first. */
  queue: Image[];
  /** Verdicts given in this visit, the last one last (undo pops it). */
  given: GivenVerdict[];
  /** Images passed over with "skip", in the order they were skipped. */
  skipped: Image[];
  /** Where the API's listing goes on; undefined with `ended`: read to its end. */
  cursor?: string;
  ended: boolean;
}

export const emptyQueue = (): ReviewQueue => ({ queue: [], given: [], skipped: [], ended: false });

export const current = (q: ReviewQueue): Image | undefined => q.queue[0];

/** Images the queue should not take again from a page: those it holds, judged here, or skipped. */
function known(q: ReviewQueue): Set<string> {
  return new Set([...q.queue, ...q.skipped, ...q.given.map((v) => v.image)].map((i) => i.fprint));
}

/** A page of the listing appended: images already known here are left out (a verdict on its way, a page read twice). */
export function withPage(q: ReviewQueue, items: Image[], cursor: string | undefined): ReviewQueue {
  const seen = known(q);
  const fresh = items.filter((i) => !seen.has(i.fprint) && !i.review);
  return { ...q, queue: [...q.queue, ...fresh], cursor, ended: !cursor };
}

/** The current image judged: it leaves the queue and becomes the verdict `undo` takes back. */
export function judge(q: ReviewQueue, isCat: boolean): ReviewQueue {
  const [image, ...rest] = q.queue;
  if (!image) return q;
  return { ...q, queue: rest, given: [...q.given, { image, isCat }] };
}

/** The last verdict taken back: its image is current again. */
export function undo(q: ReviewQueue): { queue: ReviewQueue; undone?: GivenVerdict } {
  const undone = q.given[q.given.length - 1];
  if (!undone) return { queue: q };
  return { queue: { ...q, given: q.given.slice(0, -1), queue: [undone.image, ...q.queue] }, undone };
}

/** The current image passed over for now: it waits among the skipped. */
export function skip(q: ReviewQueue): ReviewQueue {
  const [image, ...rest] = q.queue;
  if (!image) return q;
  return { ...q, queue: rest, skipped: [...q.skipped, image] };
}

/** Once the listing is read to its end and the queue is empty: the skipped images, in the order they were skipped. */
export function again(q: ReviewQueue): ReviewQueue {
  if (q.queue.length > 0 || !q.ended) return q;
  return { ...q, queue: q.skipped, skipped: [] };
}

/** A verdict the API refused: its image goes back to the front, the verdict is forgotten. */
export function refused(q: ReviewQueue, fprint: string): ReviewQueue {
  const at = q.given.findIndex((v) => v.image.fprint === fprint);
  if (at < 0) return q;
  const verdict = q.given[at]!;
  return { ...q, given: q.given.filter((_, i) => i !== at), queue: [verdict.image, ...q.queue.filter((i) => i.fprint !== fprint)] };
}

/** An undo the API refused: the verdict stands, so it is given again and its image leaves the queue. */
export function restored(q: ReviewQueue, verdict: GivenVerdict): ReviewQueue {
  const fprint = verdict.image.fprint;
  return { ...q, queue: q.queue.filter((i) => i.fprint !== fprint), given: [...q.given, verdict] };
}

/** An image read again (its presigned URLs had expired) put in the place of the one the queue holds. */
export function replaced(q: ReviewQueue, image: Image): ReviewQueue {
  return { ...q, queue: q.queue.map((i) => (i.fprint === image.fprint ? image : i)) };
}

/**
 * The listing read again from its start (a new threshold reorders it): verdicts kept (undo still works), the
 * current image kept first when it is still unreviewed, the skipped ones forgotten (they are in the listing again).
 */
export function restart(q: ReviewQueue): ReviewQueue {
  const first = q.queue[0];
  return { queue: first ? [first] : [], given: q.given, skipped: [], ended: false };
}

/** Which listing the queue reads: the unreviewed images, least sure first, or the audit sample's, at random (§13). */
export type ReviewSource = 'uncertain' | 'audit';

/** The listing's query for a source. */
export const listingQuery = (source: ReviewSource): Record<string, string> =>
  source === 'audit' ? { audit: 'pending' } : { review: 'pending', order: 'uncertain' };

/** Another listing chosen: its images read from the start, the verdicts given here kept (undo still works). */
export const switched = (q: ReviewQueue): ReviewQueue => ({ queue: [], given: q.given, skipped: [], ended: false });

/** Whether the queue wants the listing's next page: few images left and more to read. */
export const wantsMore = (q: ReviewQueue, low = 5): boolean => !q.ended && q.queue.length < low;

/** "12 of 40 reviewed": the API's counts, moved by the verdicts still on their way. */
export function progress(counts: BatchCounts, unsynced: number): { reviewed: number; of: number } {
  const of = counts.success;
  return { reviewed: Math.min(of, Math.max(0, (counts.reviewed ?? 0) + unsynced)), of };
}

/** What the detector said, in words: "cat (87%)", "not a cat (cat 12%)", "not a cat". */
export function machineSays(image: Image, catConfidence: number | null): string {
  const machine = image.machineIsCat ?? (image.review ? null : image.isCat);
  const pct = catConfidence === null ? null : `${Math.round(catConfidence)}%`;
  if (machine === null || machine === undefined) return 'no verdict';
  if (machine) return pct ? `a cat (${pct})` : 'a cat';
  return pct ? `not a cat (cat ${pct})` : 'not a cat';
}

/** A threshold as a person reads it: to the hundredth the suggestion is given in (30.01%), no trailing zeros (80%). */
export const thresholdText = (value: number): string => `${Math.round(value * 100) / 100}%`;

/** A ratio (0..1) as a whole percentage; a dash when undefined (no image on that side yet). */
export const ratioText = (value: number | null | undefined): string => (typeof value === 'number' ? `${Math.round(value * 100)}%` : '—');
