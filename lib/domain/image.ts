// An image as the store records it: its status, how its upload ended, its error, the machine's and a person's verdict,
// where an imported one was read from, and the answer a re-detection replaced. The domain (lib/domain/) imports
// nothing of the project: the bottom layer (docs/design.md, "Layers"); lib/store/attributes.ts maps its names to the
// stored attribute names.
import type { CatInstance, Detections, Label, ModelVersion, TrimmedLabels } from './detection';
import type { Audit, Review } from './review';

/**
 * What a stored image record says about its upload: being classified, classified, or refused. Duplicates are counted
 * on the record of the image they repeat, not recorded apart.
 */
export const IMAGE_STATUSES = ['processing', 'success', 'fail'] as const;
export type ImageStatus = (typeof IMAGE_STATUSES)[number];

/** How an upload ended: its own record's final status, or a duplicate counted on an earlier record. */
export type Outcome = 'success' | 'fail' | 'duplicate';

export interface ImageError {
  code: string;
  message: string;
}

export interface Image {
  clientId: string;
  /** The client's own name for the batch (the API's and S3's batch id). */
  batchId: string;
  /** Pixel fingerprint; a refused upload's record key (`fail-…`). */
  fprint: string;
  status: ImageStatus;
  /** Epoch ms: when the upload was first received. */
  uploadedAt?: number;
  /** Epoch ms: when its result was recorded. */
  classifiedAt?: number;
  /** Epoch s: DynamoDB TTL. */
  expiresAt: number;
  key?: string;
  /** ETag of the uploaded object: same key and ETag is the same upload. */
  etag?: string;
  fileName?: string;
  /** The image's verdict: the person's when reviewed, otherwise the machine's at the batch's threshold. */
  isCat?: boolean;
  /** A person's verdict, when one was given (a reuse carries it from the client's earlier record of the pixels). */
  review?: Review;
  /** Set when the image was drawn into its batch's audit sample. */
  audit?: Audit;
  /** The best Cat confidence (label or instance), 0 when none: isCat is catConfidence >= the batch's threshold. */
  catConfidence?: number;
  cats?: CatInstance[];
  /** Copied from the client's earlier classification of the same pixels in another batch: no DetectLabels call. */
  reused?: boolean;
  labels?: Label[];
  detection?: TrimmedLabels;
  /** Set by a DetectLabels call of its own (not on a reused result). */
  detections?: Detections;
  /** The model that gave the answer (a reused one: the original's); absent on records written before models were kept. */
  model?: ModelVersion;
  /** From the upload's EXIF, where it had them (Capture). */
  capturedAt?: string;
  camera?: string;
  location?: { lat: number; lon: number };
  logs?: string[];
  /** Epoch ms; set only when the record holds logs. */
  loggedAt?: number;
  phash?: string;
  width?: number;
  height?: number;
  format?: string;
  /** Where the object rests: processed/…, failed/…; none for an imported image, which stays at its source. */
  restingKey?: string;
  /** An imported image's object, read where it is and never moved (docs/design.md §16). */
  source?: SourceObject;
  errorCode?: string;
  errorMessage?: string;
  /** Later uploads of the same pixels to this batch, and the first of their names. */
  duplicates?: number;
  duplicateFiles?: string[];
  claimId?: string;
  leaseUntil?: number;
  /** The machine's answer a re-detection replaced (POST …:redetect). */
  previous?: PreviousAnswer;
  /** Set while a re-detection of the batch (its run id) still owes this image its new answer. */
  redetectRun?: string;
}

/** The machine's answer a re-detection replaced: the model that gave it, its verdict at the batch's threshold, its best Cat confidence. */
interface PreviousAnswer {
  model: ModelVersion;
  isCat: boolean;
  catConfidence: number;
}

// ---- an import: a batch classified where its images already are (docs/design.md §16) -------------------------------

/** One object of a source bucket as listed: an imported image's origin, named on its record. */
export interface SourceObject {
  bucket: string;
  /** The key as S3 stores it (decoded: a manifest's URL-encoded keys are decoded when read). */
  key: string;
  /** The version listed (a manifest's third column, an inventory's VersionId); read as that version. */
  versionId?: string;
  /** The ETag listed, without quotes: the object is read only while it still has it (else `SourceChanged`). */
  etag?: string;
  size?: number;
}

/** The machine's verdict on a classified image: kept beside a person's, else the image's own flag. */
export const machineIsCatOf = (image: Pick<Image, 'isCat' | 'review'>): boolean | undefined => image.review?.machineIsCat ?? image.isCat;

/** The one cat rule: a Cat was found, at or above the threshold (0 takes every Cat found, never an image without one). */
export const isCatAt = (catConfidence: number | undefined, threshold: number): boolean =>
  catConfidence !== undefined && catConfidence > 0 && catConfidence >= threshold;
