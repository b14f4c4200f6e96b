// GET /v1/batches/{batchId}/report?format=s3-batch-operations (docs/design.md §16): one row per object an import
// sent, in S3 Batch Operations' completion report columns (Bucket, Key, VersionId, TaskStatus, ErrorCode,
// HTTPStatusCode, ResultMessage; no header row, keys URL-encoded, as its reports are), the result message carrying
// the verdict and its confidence. Pages of the objects' upload items (a Query), their records by BatchGetItem, written
// as the exports are: inline while small, else streamed to S3 and answered with a 303.
import type { Image } from '../domain/image';
import type { ExportChunk } from '../export/writer';
import { sourceUri } from '../import/enqueue';
import { rejectionKey } from '../ingest/rejection-key';
import type { SentObject } from '../store/imports/imports';
import { answerExport, type ExportSpillDeps } from './export-batch';
import type { HttpAnswer } from './http-answer';
import type { ImportApiDeps } from './import-batch';

const csv = (v: string): string => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
/** Keys as Batch Operations writes them in its reports: URL-encoded. */
const encodeKey = (key: string): string => encodeURIComponent(key).replace(/%2F/g, '/');

const HTTP_OF: Readonly<Record<string, number>> = { SourceMissing: 404, SourceChanged: 412, ProcessingFailed: 500, NotProcessedYet: 500 };

function verdict(image: Image): string {
  const conf = (image.catConfidence ?? 0).toFixed(1);
  return `${image.isCat ? 'cat' : 'not cat'} (confidence ${conf})${image.reused ? ', reused' : ''}`;
}

/** One object's row: its record (its own, or the original's for a duplicate), or NotProcessedYet. */
function reportRow(sent: SentObject, record: Image | undefined): string {
  const s = sent.source;
  const own = record?.key === sourceUri(s);
  let cells: [string, string, string, string];
  if (!record || record.status === 'processing') cells = ['failed', 'NotProcessedYet', '500', 'not classified yet'];
  else if (record.status === 'fail') {
    const code = record.errorCode ?? 'ProcessingFailed';
    cells = ['failed', code, String(HTTP_OF[code] ?? 400), record.errorMessage ?? code];
  } else cells = ['succeeded', '', '200', own ? verdict(record) : `duplicate of ${record.fileName ?? record.fprint}: ${verdict(record)}`];
  return [s.bucket, encodeKey(s.key), s.versionId ?? '', ...cells].map(csv).join(',') + '\n';
}

/** The report's rows a page of sent objects at a time (their records by BatchGetItem). */
async function* reportChunks(deps: Pick<ImportApiDeps, 'imports'>, clientId: string, batchId: string): AsyncGenerator<ExportChunk> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await deps.imports.sentObjects(clientId, batchId, start);
    const candidates = (o: SentObject) => [...(o.fprint ? [o.fprint] : []), rejectionKey(o.source.key, o.source.etag)];
    const records = await deps.imports.records(clientId, batchId, page.items.flatMap(candidates));
    const rows = page.items.map((o) =>
      reportRow(
        o,
        candidates(o)
          .map((f) => records.get(f))
          .find((r) => r !== undefined),
      ),
    );
    if (rows.length > 0) yield { text: rows.join(''), rows: rows.length };
    start = page.next;
  } while (start);
}

/** The report, inline or behind a 303 to S3 once past the inline bound (as GET …/export). */
export function streamReport(deps: ExportSpillDeps, imports: ImportApiDeps, clientId: string, batchId: string): Promise<HttpAnswer> {
  return answerExport(deps, reportChunks(imports, clientId, batchId), {
    clientId,
    batchId,
    format: 'csv',
    contentType: 'text/csv; charset=utf-8',
    fileName: `${batchId}-report.csv`,
  });
}
