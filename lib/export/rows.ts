// One export row per uploaded file (DESIGN §7): an image record gives its own row, then one row per duplicate upload
// it absorbed, so a batch's row count equals its counts.total.

import type { ModelVersion } from '../domain/detection';
import { modelText } from '../model-version';

export const EXPORT_COLUMNS = [
  'file_name',
  'status',
  'is_cat',
  'cat_confidence',
  'labels',
  'fprint',
  'duplicate_of',
  'error_code',
  'uploaded_at',
  'classified_at',
  'machine_is_cat',
  'reviewed',
  'review_note',
  'captured_at',
  'camera',
  'lat',
  'lon',
  'model',
] as const;

type ExportStatus = 'pending' | 'processing' | 'success' | 'fail' | 'duplicate';

/** A box the detector drew, as ratios of the image's sides (Rekognition's BoundingBox), confidence 0–100. */
export interface ExportBox {
  name: string;
  confidence: number;
  box: { left: number; top: number; width: number; height: number };
}

/** What an export needs of an image record (the domain image, times in epoch ms). */
export interface ExportImage {
  fprint: string;
  fileName: string | null;
  status: ExportStatus;
  isCat: boolean | null;
  /** The detector's verdict at the batch's threshold (is_cat is the person's when reviewed); null until classified. */
  machineIsCat?: boolean | null;
  /** A person's verdict, when one was given: isCat is it. */
  /** A person's verdict (docs/design.md §10): isCat is theirs, carried into the MegaDetector file's `review`. */
  review?: { isCat?: boolean; note: string | null } | null;
  /** The Cat label's confidence; derived from `labels` when absent. */
  catConfidence?: number | null;
  labels: { name: string; confidence: number }[];
  uploadedAt: number | null;
  classifiedAt: number | null;
  /** Duplicate uploads counted on this record, and the names of those kept (bounded). */
  duplicates: number;
  duplicateFiles: string[];
  /** Set when the record is itself a duplicate upload: the original's file name. */
  duplicateOf?: string | null;
  error: { code: string } | null;
  /** The Cat boxes (the MegaDetector export's category 1). */
  cats?: { confidence: number; box: ExportBox['box'] }[];
  /** The other labels' boxes. */
  boxes?: ExportBox[];
  width?: number;
  height?: number;
  /** The model that classified it (lib/model-version.ts; a record written before records kept it: as it was then). */
  model?: ModelVersion;
  /** From the EXIF: the camera's wall clock (with its offset when it wrote one), camera, place. */
  capturedAt?: string | null;
  camera?: string | null;
  location?: { lat: number; lon: number } | null;
}

export interface ExportRow {
  file_name: string | null;
  status: ExportStatus;
  is_cat: boolean | null;
  cat_confidence: number | null;
  labels: string;
  fprint: string;
  duplicate_of: string | null;
  error_code: string | null;
  uploaded_at: string | null;
  classified_at: string | null;
  machine_is_cat: boolean | null;
  reviewed: boolean;
  review_note: string | null;
  captured_at: string | null;
  camera: string | null;
  lat: number | null;
  lon: number | null;
  /** `name@version` of the model that answered (a duplicate: its original's); null until classified. */
  model: string | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Confidences as the API gives them, without float noise: at most two decimals. */
const round2 = (n: number): number => Math.round(n * 100) / 100;

/**
 * A number's text, as String(n) writes it. String() (and a template literal) of a number with a fraction allocates
 * its text in V8's old space, where only a full collection frees it: garbage that grew an export's heap with every
 * row. JSON.stringify writes a finite number as String does (ECMA-262 SerializeJSONProperty), in the young space.
 */
export const numberText = (n: number): string => (Number.isFinite(n) ? JSON.stringify(n) : String(n));

/** `Name:confidence|…` in the record's order (most confident first, as stored). */
export const formatLabels = (labels: ExportImage['labels']): string =>
  labels.map((l) => `${l.name}:${numberText(round2(l.confidence))}`).join('|');

function catConfidenceOf(image: Pick<ExportImage, 'catConfidence' | 'labels'>): number | null {
  if (typeof image.catConfidence === 'number') return round2(image.catConfidence);
  const cat = image.labels.find((l) => l.name.toLowerCase() === 'cat');
  return cat ? round2(cat.confidence) : null;
}

/**
 * The record's row, then its duplicates' rows: each with its own file name, status `duplicate`, the original's name
 * in duplicate_of and the original's classification. Uploads counted past the stored names (the record keeps a
 * bounded list) still get a row each, with an empty file name, so no upload is missing from the count.
 */
export function exportRows(image: ExportImage): ExportRow[] {
  const classification = {
    is_cat: image.isCat,
    cat_confidence: catConfidenceOf(image),
    labels: formatLabels(image.labels),
    fprint: image.fprint,
    // A duplicate shares its original's verdict, the person's too (docs/design.md §10).
    machine_is_cat: image.machineIsCat ?? (image.status === 'success' ? image.isCat : null),
    reviewed: Boolean(image.review),
    review_note: image.review?.note ?? null,
    // A duplicate's own EXIF is not read (its pixels are the original's): it shows the original's.
    captured_at: image.capturedAt ?? null,
    camera: image.camera ?? null,
    lat: image.location?.lat ?? null,
    lon: image.location?.lon ?? null,
    model: image.model ? modelText(image.model) : null,
  };
  const own: ExportRow = {
    file_name: image.fileName,
    status: image.status,
    ...classification,
    duplicate_of: image.duplicateOf ?? null,
    error_code: image.error?.code ?? null,
    uploaded_at: iso(image.uploadedAt),
    classified_at: iso(image.classifiedAt),
  };
  const names = image.duplicateFiles.slice(0, Math.max(image.duplicates, 0));
  const unnamed = Math.max(image.duplicates - names.length, 0);
  const duplicate = (fileName: string | null): ExportRow => ({
    file_name: fileName,
    status: 'duplicate',
    ...classification,
    duplicate_of: image.fileName,
    error_code: null,
    uploaded_at: null,
    classified_at: iso(image.classifiedAt),
  });
  return [own, ...names.map(duplicate), ...Array.from({ length: unnamed }, () => duplicate(null))];
}
