// The domain every room shares: images, batches, their counters and rules, an upload's claim and result, the batch
// summary a client is shown (by the API and by the completion callback). It imports nothing of the project: the
// bottom layer (docs/design.md, "Layers"). lib/store/table/attributes.ts maps these names to the stored attribute names.

/**
 * What a stored image record says about its upload: being classified, classified, or refused. Duplicates are counted
 * on the record of the image they repeat, not recorded apart.
 */
export const IMAGE_STATUSES = ['processing', 'success', 'fail'] as const;
export type ImageStatus = (typeof IMAGE_STATUSES)[number];

/** How an upload ended: its own record's final status, or a duplicate counted on an earlier record. */
export type Outcome = 'success' | 'fail' | 'duplicate';

export interface Label {
  name: string;
  confidence: number;
}

/** Trimmed DetectLabels answer: what a debugger needs, without boxes or raw payload. */
export interface TrimmedLabels {
  model: string;
  labels: { name: string; confidence: number; parents: string[]; instances: number }[];
}

/** A box DetectLabels drew around one instance of a label other than Cat, as ratios of the image's sides. */
export interface NamedBox {
  name: string;
  confidence: number;
  box: { left: number; top: number; width: number; height: number };
}

/**
 * The model that gave an answer (docs/decisions/0031-model-versions.md): on AWS `rekognition-detect-labels` and
 * DetectLabels' LabelModelVersion; locally the model's name and the versions of its file and of its confidence mapping.
 */
export interface ModelVersion {
  name: string;
  version: string;
}

/** The model that classified an image and the boxes it drew of the labels other than Cat (the MegaDetector export's). */
export interface Detections {
  model: string;
  boxes: NamedBox[];
}

/** One cat DetectLabels found, with its box as ratios of the image's sides (Rekognition's BoundingBox). */
export interface CatInstance {
  confidence: number;
  box: { left: number; top: number; width: number; height: number };
}

/**
 * A person's verdict on an image (docs/design.md §10): it wins over the machine's. `machineIsCat` is the detector's
 * verdict at the batch's threshold, kept beside it (a re-threshold moves it, never the person's).
 */
export interface Review {
  isCat: boolean;
  note?: string;
  /** Epoch ms. */
  reviewedAt: number;
  machineIsCat: boolean;
}

/** Longest review note kept. */
export const REVIEW_NOTE_MAX_CHARS = 500;

export interface ImageError {
  code: string;
  message: string;
}

/** One image record: an upload with new pixels (or a refused upload) in a client's batch. */
/** The machine's verdict an audited image was drawn under (docs/accuracy.md). */
export type AuditStratum = 'cat' | 'notCat';

/** An image's place in its batch's audit sample (POST …/audit). */
export interface Audit {
  /** Epoch ms. */
  drawnAt: number;
  stratum: AuditStratum;
  /** The random key that orders the pending audit queue (12 hex digits). */
  order: string;
  /** The seed of the draw that took it. */
  seed: number;
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
export interface PreviousAnswer {
  model: ModelVersion;
  isCat: boolean;
  catConfidence: number;
}

export interface Counts {
  /** Every upload counted: pending + success + fail + duplicate. */
  total: number;
  /** Claimed and still being classified. */
  pending: number;
  success: number;
  fail: number;
  duplicate: number;
  /** Of success: classified by copying the client's earlier result for the same pixels (no DetectLabels call). */
  reused: number;
  /** Of success: images whose isCat is a cat (a person's verdict wins). */
  cats: number;
  /** Of success: images with a person's verdict. */
  reviewed: number;
  /** Of reviewed: verdicts that disagree with the machine's at the batch's threshold. */
  corrected: number;
}

export const ZERO_COUNTS: Counts = {
  total: 0,
  pending: 0,
  success: 0,
  fail: 0,
  duplicate: 0,
  reused: 0,
  cats: 0,
  reviewed: 0,
  corrected: 0,
};

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

/** Where an import's keys come from: a bucket and prefix, or a manifest (a Batch Operations CSV or an Inventory manifest.json). */
export type ImportSource = { bucket: string; prefix: string } | { manifest: string };

export const IMPORT_STATES = ['listing', 'waiting-for-quota', 'listed'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];

/** An import's progress, on its batch's summary. */
export interface ImportProgress {
  state: ImportState;
  /** Keys listed so far (images and others). */
  listed: number;
  /** Images sent to the uploads queue (each counted against the images quota as it was sent). */
  enqueued: number;
  /** Keys listed that are not images by name (and folder markers): never enqueued. */
  skipped: number;
  /** Epoch ms: when an import waiting for the quota goes on (the next UTC midnight). */
  resumesAt?: number;
}

export interface Batch {
  clientId: string;
  batchId: string;
  /** Epoch ms. */
  createdAt: number;
  debug: boolean;
  retentionDays: number;
  /** Epoch s: DynamoDB TTL. */
  expiresAt: number;
  /** Files the client said it uploads in all; undefined when it never said. */
  expected?: number;
  closed: boolean;
  /** Epoch ms. */
  closedAt?: number;
  /** The cat threshold the batch was last re-thresholded to (POST …:reclassify); the configured one until then. */
  catMinConfidence?: number;
  /** Epoch ms; set once, by the write that made the batch done. */
  doneAt?: number;
  counts: Counts;
  /** Being erased (DELETE): invisible to reads, refused by the ingest. */
  deleting?: boolean;
  /** Where the summary is POSTed once the batch is done. */
  callbackUrl?: string;
  /** The last delivery of that POST. */
  callback?: CallbackState;
  /** Done with a callback not yet delivered nor given up (the sweep queues it again when its message was lost). */
  callbackDue?: boolean;
  /** Epoch ms: when the sweep last queued the callback again. */
  callbackRequeuedAt?: number;
  /** Being classified again (POST …:redetect): its run id and the images it still owes an answer. */
  redetecting?: { run: string; left: number };
  /** An import's source and progress (docs/design.md §16); absent on a batch of uploads. */
  import?: ImportProgress & { source: ImportSource };
}

export const BATCH_STATUSES = ['open', 'processing', 'done'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** Every declared file arrived (or none was declared). */
export const allArrived = (b: Pick<Batch, 'expected' | 'counts'>): boolean => b.expected === undefined || b.counts.total >= b.expected;

/** docs/design.md §6: open until closed; processing while anything is pending or declared files are missing; then done. */
export function batchStatus(b: Pick<Batch, 'closed' | 'expected' | 'counts'>): BatchStatus {
  if (!b.closed) return 'open';
  return b.counts.pending === 0 && allArrived(b) ? 'done' : 'processing';
}

/**
 * The status a reader is told: `done` only once the write that stamps doneAt has landed, as the batch list's filter
 * (done_ts) has it, so no summary says done without doneAt, before the completion callback is queued.
 */
export function reportedStatus(
  b: Pick<Batch, 'closed' | 'expected' | 'counts' | 'doneAt'> & Pick<Partial<Batch>, 'redetecting'>,
): BatchStatus {
  // A re-detection makes a done batch processing again until its last image has its new answer.
  if (b.redetecting !== undefined) return 'processing';
  if (b.doneAt !== undefined) return 'done';
  const status = batchStatus(b);
  return status === 'done' ? 'processing' : status;
}

/**
 * A batch is shown while it exists, has not expired and is not being erased (the reads and the lifecycle service alike).
 * Here rather than beside isVisibleImage in reader.ts, which the batches function must not bundle.
 */
export function isVisibleBatch(batch: Batch | undefined, nowS: number): batch is Batch {
  return batch !== undefined && batch.deleting !== true && typeof batch.expiresAt === 'number' && batch.expiresAt > nowS;
}

/** Auto-close: as many uploads arrived as the client declared. */
export const shouldAutoClose = (b: Batch): boolean => !b.closed && b.expected !== undefined && b.counts.total >= b.expected;

/** Done now, and not yet stamped done. */
export const shouldMarkDone = (b: Batch): boolean => b.doneAt === undefined && batchStatus(b) === 'done';

/** The machine's verdict on a classified image: kept beside a person's, else the image's own flag. */
export const machineIsCatOf = (image: Pick<Image, 'isCat' | 'review'>): boolean | undefined => image.review?.machineIsCat ?? image.isCat;

/** The one cat rule: a Cat was found, at or above the threshold (0 takes every Cat found, never an image without one). */
export const isCatAt = (catConfidence: number | undefined, threshold: number): boolean =>
  catConfidence !== undefined && catConfidence > 0 && catConfidence >= threshold;

// ---- an upload on its way: its pixels' identity, its claim on a record, its result ----------------------------------

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

// ---- what a batch cost, and what an upload will cost (docs/design.md §12) ----------------------------------------

/** Rekognition's first price tier per DetectLabels call, unless ICECAT_PRICE_PER_IMAGE_USD says otherwise. */
export const DEFAULT_PRICE_PER_IMAGE_USD = 0.001;

export interface BatchUsage {
  /** Images classified by a DetectLabels call of their own. */
  detectLabelsCalls: number;
  /** Images classified by copying the client's earlier answer for the same pixels: no call. */
  reused: number;
  /** Uploads of pixels already in the batch: no call. */
  duplicates: number;
  estimatedCostUsd: number;
  /** The calls reuse and duplicates avoided, at the same price. */
  savedUsd: number;
}

/** Dollars without float noise (1e-9 of a dollar is far below any price tier). */
export const dollars = (n: number): number => Math.round(n * 1e9) / 1e9;

export function batchUsage(counts: { success: number; reused: number; duplicate: number }, pricePerImage: number): BatchUsage {
  const detectLabelsCalls = Math.max(counts.success - counts.reused, 0);
  return {
    detectLabelsCalls,
    reused: counts.reused,
    duplicates: counts.duplicate,
    estimatedCostUsd: dollars(detectLabelsCalls * pricePerImage),
    savedUsd: dollars((counts.reused + counts.duplicate) * pricePerImage),
  };
}

export interface Estimate {
  /** The files that are images. */
  images: number;
  /** Their distinct fingerprints. */
  distinct: number;
  /** Of those, the ones the client already has answers for (reused, not called). */
  known: number;
  /** distinct − known. */
  newCalls: number;
  estimatedCostUsd: number;
}

export function uploadEstimate(images: number, distinct: number, known: number, pricePerImage: number): Estimate {
  const newCalls = Math.max(distinct - known, 0);
  return { images, distinct, known, newCalls, estimatedCostUsd: dollars(newCalls * pricePerImage) };
}

/** A label and how many distinct images of a batch carry it at the batch's threshold. */
/** A model and how many of a batch's classified images it answered (the summary's `models`). */
export interface ModelCount extends ModelVersion {
  images: number;
}

export interface LabelCount {
  name: string;
  images: number;
}

// ---- what a client is shown of a batch ---------------------------------------------------------------------------

/** What GET /v1/batches/{batchId} shows of the callback. */
export interface CallbackState {
  url: string;
  attempts: number;
  lastAttemptAt: number | null;
  /** The receiver's status of the last attempt, null when none came. */
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: number | null;
  /** Set when the window closed without a 2xx. */
  gaveUpAt: number | null;
  /** Epoch ms of the first attempt: where the retry window starts (also for an attempt the sweep queues again). */
  firstAttemptAt?: number;
}

/** The completion callback's delivery as a client sees it (GET /v1/batches/{batchId}, `callback`). */
export interface CallbackDelivery {
  url: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  gaveUpAt: string | null;
}

/**
 * A batch as the API shows it and the completion callback sends it (docs/design.md §3): camelCase, ISO-8601 UTC
 * times, nulls where nothing is known yet. lib/api/schemas.ts declares the same shape for validation and OpenAPI,
 * and checks at compile time that the two agree.
 */
export interface BatchSummary {
  batchId: string;
  status: BatchStatus;
  closed: boolean;
  expected: number | null;
  counts: Counts;
  usage: BatchUsage;
  /** A done batch's top labels (GET of one batch); null where not counted. */
  labels: LabelCount[] | null;
  /** The models that answered a done batch's images, with how many each (GET of one batch); null where not counted. */
  models: ModelCount[] | null;
  debug: boolean;
  catMinConfidence: number | null;
  retentionDays: number;
  createdAt: string;
  closedAt: string | null;
  doneAt: string | null;
  expiresAt: string;
  callbackUrl: string | null;
  callback: CallbackDelivery | null;
  /** An import's progress (docs/design.md §16); only on a batch from a source. */
  import?: ImportSummary;
}

/** An import's progress as a client reads it. */
export interface ImportSummary {
  source: ImportSource;
  state: ImportState;
  listed: number;
  enqueued: number;
  skipped: number;
  resumesAt: string | null;
}

const iso = (ms: number | undefined): string | null => (typeof ms === 'number' ? new Date(ms).toISOString() : null);

export interface PresentBatchOptions {
  /** Dollars per DetectLabels call (config: ICECAT_PRICE_PER_IMAGE_USD); default DEFAULT_PRICE_PER_IMAGE_USD. */
  pricePerImageUsd?: number;
  /** The batch's top labels, when they were counted. */
  labels?: LabelCount[] | null;
  /** The models that answered its images, when they were counted. */
  models?: ModelCount[] | null;
}

export function presentBatch(batch: Batch, opts: PresentBatchOptions = {}): BatchSummary {
  return {
    batchId: batch.batchId,
    status: reportedStatus(batch),
    closed: batch.closed,
    expected: batch.expected ?? null,
    counts: { ...batch.counts },
    usage: batchUsage(batch.counts, opts.pricePerImageUsd ?? DEFAULT_PRICE_PER_IMAGE_USD),
    labels: opts.labels ?? null,
    models: opts.models ?? null,
    debug: batch.debug,
    catMinConfidence: batch.catMinConfidence ?? null,
    retentionDays: batch.retentionDays,
    createdAt: new Date(batch.createdAt).toISOString(),
    closedAt: iso(batch.closedAt),
    doneAt: iso(batch.doneAt),
    expiresAt: new Date(batch.expiresAt * 1000).toISOString(),
    callbackUrl: batch.callbackUrl ?? null,
    callback: presentCallback(batch),
    ...(batch.import ? { import: presentImport(batch.import) } : {}),
  };
}

function presentImport(p: NonNullable<Batch['import']>): ImportSummary {
  const { source, state, listed, enqueued, skipped } = p;
  return { source, state, listed, enqueued, skipped, resumesAt: iso(p.resumesAt) };
}

/** The completion callback's delivery: pending from the moment the batch is done until delivered or given up. */
function presentCallback(batch: Batch): CallbackDelivery | null {
  const state = batch.callback;
  if (!state) {
    return batch.callbackDue && batch.callbackUrl
      ? {
          url: batch.callbackUrl,
          status: 'pending',
          attempts: 0,
          lastAttemptAt: null,
          lastStatus: null,
          lastError: null,
          deliveredAt: null,
          gaveUpAt: null,
        }
      : null;
  }
  return {
    url: state.url,
    status: state.deliveredAt !== null ? 'delivered' : state.gaveUpAt !== null ? 'failed' : 'pending',
    attempts: state.attempts,
    lastAttemptAt: iso(state.lastAttemptAt ?? undefined),
    lastStatus: state.lastStatus,
    lastError: state.lastError,
    deliveredAt: iso(state.deliveredAt ?? undefined),
    gaveUpAt: iso(state.gaveUpAt ?? undefined),
  };
}

/**
 * Counters no sequence of whole writes can leave (docs/design.md, "A full disk"): every counter move keeps them, so
 * only a lost move (without transactions, a record written and its count refused) or a recount racing one can break
 * them. A batch that shows one is recounted from its records.
 */
export function countsCannotBeRight(c: Counts): boolean {
  if (Object.values(c).some((n) => n < 0)) return true;
  if (c.pending + c.success + c.fail + c.duplicate !== c.total) return true;
  return c.reused > c.success || c.cats > c.success || c.reviewed > c.success || c.corrected > c.reviewed;
}
