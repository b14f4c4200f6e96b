// What an upload would cost before it is sent (icecat upload --dry-run): the files fingerprinted and checked here
// exactly as the ingest does before DetectLabels (the same function, detectableImage in lib/ingest/fingerprint.ts),
// their distinct fingerprints asked of POST /v1/fingerprints:known in slices of at most 1,000, and the rest priced as
// new DetectLabels calls.
import { readFile } from 'node:fs/promises';
import { KNOWN_FINGERPRINTS_MAX, type KnownFingerprints } from '../api/client-contract';
import { DEFAULT_MAX_INPUT_PIXELS } from '../config';
import { type Estimate, uploadEstimate } from '../domain/pricing';
import { detectableImage } from '../ingest/fingerprint';

/** Files decoded at once: a decode takes a core, and holds one image's pixels. */
const FINGERPRINT_PARALLEL = 2;

/**
 * The fingerprint the ingest would give this file, or undefined when the ingest would refuse it (not an image, corrupt,
 * too many pixels, under 80 px a side): such a file is recorded as a failure and never sent to DetectLabels.
 */
export async function localFingerprint(path: string, maxInputPixels = DEFAULT_MAX_INPUT_PIXELS): Promise<string | undefined> {
  try {
    return (await detectableImage(await readFile(path), { maxInputPixels })).fprint;
  } catch {
    return undefined;
  }
}

/** Fingerprints of the files (undefined for those that are not images), a few at a time, in the files' order. */
export async function localFingerprints(paths: readonly string[]): Promise<(string | undefined)[]> {
  const out = new Array<string | undefined>(paths.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < paths.length; i = next++) out[i] = await localFingerprint(paths[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(FINGERPRINT_PARALLEL, paths.length) }, worker));
  return out;
}

export type AskKnown = (fprints: string[]) => Promise<KnownFingerprints>;

/**
 * The estimate of uploading files with these fingerprints: `known` asked in slices of KNOWN_FINGERPRINTS_MAX, or,
 * without a service to ask (`ask` undefined), none known. Priced at the service's price when it says one.
 */
export async function estimateUpload(
  fprints: readonly (string | undefined)[],
  ask: AskKnown | undefined,
  fallbackPrice: number,
): Promise<Estimate> {
  const images = fprints.filter((f): f is string => f !== undefined);
  const distinct = [...new Set(images)];
  let known = 0;
  let price = fallbackPrice;
  if (ask) {
    for (let i = 0; i < distinct.length; i += KNOWN_FINGERPRINTS_MAX) {
      const answer = await ask(distinct.slice(i, i + KNOWN_FINGERPRINTS_MAX));
      const asked = new Set(distinct.slice(i, i + KNOWN_FINGERPRINTS_MAX));
      known += new Set(answer.known.filter((f) => asked.has(f))).size;
      if (typeof answer.pricePerImageUsd === 'number') price = answer.pricePerImageUsd;
    }
  }
  return uploadEstimate(images.length, distinct.length, known, price);
}

export const estimateLine = (e: Estimate): string =>
  `estimate: ${e.images} ${e.images === 1 ? 'image' : 'images'}, ${e.distinct} distinct, ${e.known} already known, ` +
  `${e.newCalls} new DetectLabels ${e.newCalls === 1 ? 'call' : 'calls'}: $${e.estimatedCostUsd}`;
