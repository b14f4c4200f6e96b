// Step 3 (docs/design.md §1): the exact key (fprint) and the perceptual hint, with the capture data of its EXIF.
import type { Capture, Fingerprint } from '../../domain/upload';
import { readCapture } from '../capture';
import type { IngestDeps } from '../deps';
import { detectableImage } from '../fingerprint';
import type { Read } from './read';

export interface Fingerprinted extends Read {
  readonly image: Fingerprint;
  /** Capture time, camera and place from its EXIF (lib/ingest/capture.ts). */
  readonly capture: Capture;
}

export async function fingerprintImage(deps: IngestDeps, read: Read): Promise<Fingerprinted> {
  const { upload, object } = read;
  const image = await detectableImage(object.bytes, { maxInputPixels: deps.config.maxInputPixels });
  upload.log.add(`fingerprint ${image.fprint} phash ${image.phash} ${image.format} ${image.width}x${image.height}`);
  return { ...read, image, capture: readCapture(image.exif, upload.receivedAt) };
}

/** The upload's own item still lacks the fingerprint this run found: the write recording under it notes it. */
export const noteNeeded = ({ attempt, image }: Fingerprinted): boolean => attempt.fprint !== image.fprint;
