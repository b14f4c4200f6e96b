// Export encoders: CSV (RFC 4180) and JSON Lines, one row at a time so a writer can stream them.
import { type MegaDetectorContext, MegaDetectorEncoder } from './megadetector';
import { EXPORT_COLUMNS, type ExportImage, type ExportRow, exportRows, numberText } from './rows';

export const EXPORT_FORMATS = ['csv', 'jsonl', 'megadetector'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  jsonl: 'application/x-ndjson; charset=utf-8',
  megadetector: 'application/json; charset=utf-8',
};

/** The export's file name extension. */
export const FILE_EXTENSIONS: Record<ExportFormat, string> = { csv: 'csv', jsonl: 'jsonl', megadetector: 'json' };

/** Columns holding text the uploader chose (file names) or that a spreadsheet might read as a formula. */
const TEXT_COLUMNS = new Set<keyof ExportRow>(['file_name', 'duplicate_of', 'labels', 'error_code', 'review_note', 'camera']);

/**
 * Spreadsheets run a cell starting with = + - @ (or a tab or CR, which some strip first) as a formula (OWASP
 * "CSV injection"). A file name is the uploader's choice, so such a text cell gets a leading apostrophe, which
 * spreadsheets show as text. Numbers, booleans and times are never prefixed; JSON Lines is never altered.
 */
export const neutralizeFormula = (text: string): string => (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text);

/** RFC 4180: a field with a comma, quote, CR or LF is quoted, its quotes doubled. */
export const csvField = (text: string): string => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

function csvCell(column: keyof ExportRow, value: ExportRow[keyof ExportRow]): string {
  if (value === null) return '';
  const text = typeof value === 'number' ? numberText(value) : String(value);
  return csvField(TEXT_COLUMNS.has(column) ? neutralizeFormula(text) : text);
}

const CRLF = '\r\n';

export const csvHeader = (): string => EXPORT_COLUMNS.join(',') + CRLF;

export const csvLine = (row: ExportRow): string => EXPORT_COLUMNS.map((c) => csvCell(c, row[c])).join(',') + CRLF;

/** Keys in column order, nulls kept, so every line has the same shape. */
export const jsonLine = (row: ExportRow): string => JSON.stringify(Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, row[c]]))) + '\n';

/** One export's encoder: its start, each image record's text (with how many entries it made), then its end. */
export interface ExportEncoder {
  header: string;
  image(image: ExportImage): { text: string; rows: number };
  footer(): string;
}

/** CSV and JSON Lines: one row per uploaded file, nothing after the last. */
function rowEncoder(header: string, line: (row: ExportRow) => string): ExportEncoder {
  return {
    header,
    image(image) {
      const rows = exportRows(image);
      return { text: rows.map(line).join(''), rows: rows.length };
    },
    footer: () => '',
  };
}

/** A fresh encoder per export (the MegaDetector one keeps its categories); `context` is the MegaDetector file's batch. */
export function encoderFor(format: ExportFormat, context: MegaDetectorContext = { catMinConfidence: 0 }): ExportEncoder {
  if (format === 'megadetector') return new MegaDetectorEncoder(context);
  return format === 'csv' ? rowEncoder(csvHeader(), csvLine) : rowEncoder('', jsonLine);
}
