// Export encoders: CSV (RFC 4180) and JSON Lines, one row at a time so a writer can stream them.
import { EXPORT_COLUMNS, type ExportRow } from './rows';

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

/** Columns holding text the uploader chose (file names) or that a spreadsheet might read as a formula. */
const TEXT_COLUMNS = new Set<keyof ExportRow>(['file_name', 'duplicate_of', 'labels', 'error_code', 'review_note']);

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
  const text = String(value);
  return csvField(TEXT_COLUMNS.has(column) ? neutralizeFormula(text) : text);
}

const CRLF = '\r\n';

export const csvHeader = (): string => EXPORT_COLUMNS.join(',') + CRLF;

export const csvLine = (row: ExportRow): string => EXPORT_COLUMNS.map((c) => csvCell(c, row[c])).join(',') + CRLF;

/** Keys in column order, nulls kept, so every line has the same shape. */
export const jsonLine = (row: ExportRow): string =>
  JSON.stringify(Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, row[c]]))) + '\n';

export interface ExportEncoder {
  header: string;
  line(row: ExportRow): string;
}

export const encoderFor = (format: ExportFormat): ExportEncoder =>
  format === 'csv' ? { header: csvHeader(), line: csvLine } : { header: '', line: jsonLine };
