// The API's shapes as its clients (the CLI and the web app) see them (docs/design.md §3). The clients are written
// against this contract, not against the server's implementation, so fields a server does not send yet are optional
// here. No imports: the web app compiles it without Node's types and bundles it for the browser.

export const OP_STATUSES = ['pending', 'processing', 'success', 'fail', 'duplicate'] as const;
export type OpStatus = (typeof OP_STATUSES)[number];
export const BATCH_STATUSES = ['open', 'processing', 'done'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

export interface ApiErrorBody {
  error: { code: string; message: string };
}

export interface BatchCounts {
  total: number;
  pending?: number;
  success: number;
  fail: number;
  duplicate: number;
  reused?: number;
  /** Images whose isCat is a cat (a person's verdict wins). */
  cats: number;
  /** Images with a person's verdict (absent from servers without review). */
  reviewed?: number;
  /** Reviewed images whose verdict differs from the machine's at the batch's threshold. */
  corrected?: number;
}

/** What a batch cost in DetectLabels calls, and what reuse and duplicates saved (dollars at the server's price). */
export interface BatchUsage {
  detectLabelsCalls: number;
  reused: number;
  duplicates: number;
  estimatedCostUsd: number;
  savedUsd: number;
}

/** POST /v1/fingerprints:known: which of the fingerprints the client already has answers for. */
export interface KnownFingerprints {
  known: string[];
  /** The server's price per DetectLabels call. */
  pricePerImageUsd?: number;
}

/** Most fingerprints one POST /v1/fingerprints:known takes. */
export const KNOWN_FINGERPRINTS_MAX = 1000;

export interface BatchSummary {
  batchId: string;
  status: BatchStatus;
  /** Absent from servers without the :close route. */
  closed?: boolean;
  expected: number | null;
  counts: BatchCounts;
  /** Absent from servers before cost was reported. */
  usage?: BatchUsage;
  /** A done batch's top labels with how many distinct images carry each at its threshold; null where not counted. */
  labels?: { name: string; images: number }[] | null;
  debug: boolean;
  /** The cat threshold of the last :reclassify; null: the deployment's configured one. */
  catMinConfidence?: number | null;
  callbackUrl?: string | null;
  createdAt: string;
  closedAt?: string | null;
  doneAt?: string | null;
  expiresAt: string;
  /** Only on a batch from a source (an import); absent from servers without imports. */
  import?: ImportSummary;
}

/** Where an import's keys come from: a bucket and prefix, or a manifest's s3:// address. */
export type ImportSourceAddress = { bucket: string; prefix: string } | { manifest: string };

/** An import's progress on its batch's summary (docs/design.md §16). */
export interface ImportSummary {
  source: ImportSourceAddress;
  state: 'listing' | 'waiting-for-quota' | 'listed';
  listed: number;
  enqueued: number;
  skipped: number;
  /** When a listing waiting for the quota goes on (ISO time); null otherwise. */
  resumesAt: string | null;
}

/** POST /v1/batches/{batchId}:retry: the failed imported images sent again. */
export interface RetriedImport {
  batchId: string;
  resubmitted: number;
  batch: BatchSummary;
}

export interface Label {
  name: string;
  confidence: number;
}

/** A cat's place as ratios of the image's sides (Rekognition's BoundingBox). */
export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface Image {
  batchId: string;
  fprint: string;
  fileName: string | null;
  status: OpStatus;
  isCat: boolean | null;
  catConfidence?: number | null;
  labels: Label[];
  cats?: { confidence: number; box?: Box | null }[];
  uploadedAt: string | null;
  classifiedAt: string | null;
  duplicates: number;
  /** File names of this batch's later uploads of the same pixels (bounded by the server). */
  duplicateFiles?: string[];
  reused?: boolean;
  /** The detector's verdict at the batch's threshold; isCat is the person's when `review` is set. */
  machineIsCat?: boolean | null;
  /** The machine's answer a POST …:redetect replaced; null when never re-detected. */
  previous?: { model: { name: string; version: string }; isCat: boolean; catConfidence: number } | null;
  /** A person's verdict (PUT …/review); null when none. */
  review?: Review | null;
  /** Its place in the batch's audit sample (POST …/audit); null when not drawn (or not shown by a listing). */
  audit?: { drawnAt: string; stratum: AuditStratum } | null;
  error: { code: string; message: string } | null;
  /** Presigned GET of a WebP at most 256 px a side; null when the image was never decoded. */
  thumbnailUrl?: string | null;
  /** Presigned GET of the classified image (a duplicate: its original); null unless classified. */
  imageUrl?: string | null;
  /** From the EXIF: the camera's wall clock (with its offset when written), `Make Model`, the GPS position. */
  capturedAt?: string | null;
  camera?: string | null;
  location?: { lat: number; lon: number } | null;
}

export interface Review {
  isCat: boolean;
  note: string | null;
  reviewedAt: string;
}

/** GET …/agreement: the machine against the batch's reviews. */
export interface Agreement {
  reviewed: number;
  agree: number;
  precision: number | null;
  recall: number | null;
  /** The threshold that would have agreed with the most reviews (ties: the lowest), for :reclassify; null without reviews. */
  suggestedCatMinConfidence: number | null;
  /** The batch's threshold now. */
  catMinConfidence?: number;
}

/** The machine's verdict an audited image was drawn under. */
type AuditStratum = 'cat' | 'notCat';

/** POST …/audit: what one draw added to the batch's audit sample. */
export interface AuditResult {
  batchId: string;
  seed: number;
  drawn: number;
  sampled: number;
  strata: { stratum: AuditStratum; images: number; sampled: number; drawn: number }[];
}

/** An estimate with its 95 % interval. */
export interface Estimate {
  estimate: number;
  low: number;
  high: number;
}

/** GET …/accuracy: estimates from the audit sample's reviews; null where nothing supports one. */
export interface Accuracy {
  sampled: number;
  reviewed: number;
  strata: { stratum: AuditStratum; images: number; sampled: number; reviewed: number; agree: number }[];
  precision: Estimate | null;
  recall: Estimate | null;
  accuracy: Estimate | null;
  cats: Estimate | null;
  /** After a re-detection: each model's estimates on the same audited reviews (absent otherwise). */
  models?: ModelAccuracy[];
}

/** One model's estimates on the audit sample. */
export interface ModelAccuracy {
  model: { name: string; version: string };
  sampled: number;
  reviewed: number;
  precision: Estimate | null;
  recall: Estimate | null;
  accuracy: Estimate | null;
  cats: Estimate | null;
}

/** POST …:redetect's answer. */
export interface Redetected {
  dryRun: boolean;
  images: number;
  newCalls: number;
  estimatedCostUsd: number;
  batch: BatchSummary;
}

/** One side of a change: the answer and the model that gave it. */
interface ChangedAnswer {
  model: { name: string; version: string };
  isCat: boolean;
  catConfidence: number;
}

/** One image of GET …/changes. */
export interface VerdictChange {
  fprint: string;
  fileName: string | null;
  change: string;
  previous: ChangedAnswer;
  current: ChangedAnswer;
}

/** The path of one image's review. */
export const reviewPath = (batchId: string, fprint: string): string =>
  `/v1/batches/${encodeURIComponent(batchId)}/images/${encodeURIComponent(fprint)}/review`;

export interface LogEntry {
  batchId: string;
  fprint: string;
  fileName: string | null;
  status: OpStatus | null;
  loggedAt: string | null;
  lines: string[];
}

export interface Page<T> {
  items: T[];
  cursor?: string;
}

export interface DeclaredFile {
  name: string;
  contentType: string;
  size: number;
}

export interface UploadForm {
  file: string;
  url: string;
  fields: Record<string, string>;
}

export interface CreatedBatch {
  batchId: string;
  uploads: UploadForm[];
  expiresAt: string;
  callbackSecret?: string;
  batch: BatchSummary;
}

export interface MoreUploads {
  uploads: UploadForm[];
  expiresAt?: string;
  batch?: BatchSummary;
}

/** A page of :reclassify; a cursor: send the same threshold with it to go on. */
export interface Reclassified {
  batch: BatchSummary;
  cursor?: string;
}

export interface SimilarGroups {
  /** fileNames: each image's file name, in the order of fprints. */
  groups: { fprints: string[]; maxDistance: number; fileNames: (string | null)[] }[];
}

/** GET /v1/usage: the client's limits and today's (UTC) use of its images quota. */
export interface Usage {
  clientId: string;
  day: string;
  limits: { requestsPerSecond: number; burst: number; imagesPerDay: number };
  images: { accepted: number; rejected: number; remaining: number };
  resetsAt: string;
  /** The server's price per DetectLabels call (absent from servers before it was reported here). */
  pricePerImageUsd?: number;
}

/** Query-string parameters; undefined ones are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** The path of a batch or of one of its sub-resources; ids are checked by the API, encoded here. */
export const batchPath = (batchId: string, rest = ''): string => `/v1/batches/${encodeURIComponent(batchId)}${rest}`;
