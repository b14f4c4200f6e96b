import { envNumber } from '../config';

export interface ExportConfig {
  /**
   * Largest export answered in the response body. Lambda answers at most 6 MB, JSON-escaped body included; 1 MiB
   * leaves room for escaping and keeps the function's memory small. Anything larger goes to S3 and a redirect.
   */
  inlineMaxBytes: number;
  /** Lifetime of the presigned GET of a stored export. */
  urlSeconds: number;
}

export const loadExportConfig = (): ExportConfig => ({
  inlineMaxBytes: envNumber('EXPORT_INLINE_MAX_BYTES', 1024 * 1024, { min: 0, max: 4 * 1024 * 1024, integer: true }),
  urlSeconds: envNumber('EXPORT_URL_SECONDS', 900, { min: 60, max: 3600, integer: true }),
});
