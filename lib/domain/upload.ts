// An upload on its way through the ingest: its fingerprint and capture, the claim on its image record, its result and
// how it finishes, and the reference a queue message carries.
import type { CatInstance, Detections, Label, ModelVersion, TrimmedLabels } from './detection';
import type { ImageError, SourceObject } from './image';
import type { Review } from './review';

/** An image's identity as decoded from its bytes (lib/ingest/fingerprint.ts computes it). */
export interface Fingerprint {
  /** 128-bit XXH3 of the dimensions and the XXH3 of the canonical decoded pixels (32 hex): the exact dedupe key. */
  fprint: string;
  /** 64-bit DCT perceptual hash, hex: a near-duplicate hint, never a key. */
  phash: string;
  /** Format as sharp detected it from the bytes, not from the file name. */
  format: string;
  /** Oriented dimensions. */
  width: number;
  height: number;
  /**
   * The thumbnail: a WebP at most THUMBNAIL_SIDE px a side, oriented, encoded on each call from a preview sampled
   * out of the decoded pixels during the fingerprint (no second decode). The preview is at most 256x256 pixels, so
   * holding a Fingerprint does not hold the decoded image; a duplicate that needs no thumbnail pays no encode.
   */
  thumbnail(): Promise<Buffer>;
  /** The raw EXIF block sharp found in the header (a HEIF's Exif item), if any (capture time, camera, place: lib/ingest/capture.ts). */
  exif?: Buffer;
  /**
   * A JPEG of the decoded pixels for DetectLabels, where sharp cannot convert the bytes themselves (an HEVC HEIF,
   * docs/design.md §12). Such a Fingerprint holds its decoded pixels until it is dropped.
   */
  rekognitionJpeg?(): Promise<Buffer>;
}

/**
 * When, with what and where a photo was taken, from its EXIF (docs/design.md §12); each null when absent or
 * impossible. `capturedAt` is the camera's wall clock, with its offset when the camera wrote one
 * (`2024-06-01T06:30:00+02:00`), else without a zone (`2024-06-01T06:30:00`).
 */
export interface Capture {
  capturedAt: string | null;
  camera: string | null;
  location: { lat: number; lon: number } | null;
}

/** One upload's claim on (batch, fingerprint): who holds it and what it knows of the upload. */
export interface Claim {
  clientId: string;
  batchId: string;
  fprint: string;
  claimId: string;
  key: string;
  etag?: string;
  fileName: string;
  phash: string;
  format: string;
  width: number;
  height: number;
  now: number;
  leaseMs: number;
  /** Epoch s: the batch's expiry, which every record of the batch shares (its TTL). */
  expiresAt: number;
  /** An imported image's object (docs/design.md §16): written on the record with the claim. */
  source?: SourceObject;
}

/** A classification: DetectLabels' own (with its trimmed answer) or one reused from the client's earlier record. */
export type ImageResult =
  | {
      status: 'success';
      isCat: boolean;
      catConfidence: number;
      cats: CatInstance[];
      labels: Label[];
      detection?: TrimmedLabels;
      /** The model and the other labels' boxes (a DetectLabels call's own, not a reused result's). */
      detections?: Detections;
      /** The model that gave the answer (a reused result: the original's). */
      model?: ModelVersion;
      /** Epoch ms of the classification a reused result was copied from. */
      reusedFrom?: number;
      /**
       * A person's verdict carried with a reused result (docs/design.md §10): the image's isCat is then the person's,
       * and `isCat` above stays the machine's.
       */
      review?: Omit<Review, 'machineIsCat'>;
    }
  | { status: 'fail'; error: ImageError };

export interface Finish {
  result: ImageResult;
  /** The upload's own capture time, camera and place (a reused result's too: they are this upload's EXIF). */
  capture?: Capture;
  /** When the upload arrived: its upload time in every index. */
  uploadedAt: number;
  now: number;
  /** Where the object rests; none for an imported image, which stays at its source. */
  restingKey?: string;
  logs?: string[];
}

/** One upload (its key and ETag) in a batch; its item lives as long as the batch. */
export interface UploadRef {
  clientId: string;
  batchId: string;
  key: string;
  etag?: string;
  /** Epoch s: the batch's TTL. */
  expiresAt: number;
}
