// An import's progress on its batch's page (docs/design.md §16): where its images are (read there: nothing copied,
// moved or deleted), the listing's state (listing, waiting for the quota and until when, listed) with its counts, and
// its completion report in S3 Batch Operations' CSV columns, saved as a download (the key travels in a header, never
// in a link).
import { useState } from 'preact/hooks';
import { type Api, type BatchSummary, batchPath, type ImportSummary } from '../../api';
import { when } from '../../format';
import { saveBlob } from './export-buttons';

export const describeSource = (s: ImportSummary['source']): string => ('manifest' in s ? s.manifest : `s3://${s.bucket}/${s.prefix}`);

/** The import's state in words. */
export function importState(imp: ImportSummary, done: boolean): string {
  if (imp.state === 'waiting-for-quota')
    return `Waiting for the quota: today's images are used up. The listing goes on at ${when(imp.resumesAt)}, losing nothing.`;
  if (imp.state === 'listing') return 'Listing the source…';
  return done ? 'Every key listed and every image classified.' : 'Every key listed; classifying the images sent.';
}

/** A short word for the batch list's chip. */
export const importChip = (imp: ImportSummary): string =>
  imp.state === 'waiting-for-quota' ? 'import: waiting for quota' : imp.state === 'listing' ? 'import: listing' : 'import';

function ReportButton({ api, batchId }: { api: Api; batchId: string }) {
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const name = `${batchId}-report.csv`;
  const download = async () => {
    setBusy(true);
    setMessage(null);
    try {
      const blob = await api.blob(`${batchPath(batchId)}/report`, { format: 's3-batch-operations' });
      saveBlob(blob, name);
      setMessage(`Saved ${name}.`);
    } catch (error) {
      setMessage(`The report failed: ${(error as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="exports">
      <button
        type="button"
        disabled={busy}
        onClick={download}
        title="One row per object, in S3 Batch Operations' completion report columns"
      >
        Completion report (CSV)
      </button>
      {message && (
        <span role="status" class="muted">
          {message}
        </span>
      )}
    </div>
  );
}

/** Only on a batch from a source. */
export function ImportPanel({ api, batch }: { api: Api; batch: BatchSummary }) {
  const imp = batch.import;
  if (!imp) return null;
  return (
    <section class="import" aria-labelledby="import-title" data-import-state={imp.state}>
      <h2 id="import-title">Import</h2>
      <p class="import-source">
        From <code>{describeSource(imp.source)}</code>, {'manifest' in imp.source ? 'the keys its manifest names' : 'every key under it'},
        read where they are: nothing copied, moved or deleted.
      </p>
      <p class={`import-state import-${imp.state}`} aria-live="polite">
        {importState(imp, batch.status === 'done')}
      </p>
      <ul class="counts" aria-label="Listing">
        <li>{imp.listed.toLocaleString('en')} listed</li>
        <li>{imp.enqueued.toLocaleString('en')} sent to be classified</li>
        <li>{imp.skipped.toLocaleString('en')} skipped (not images by name)</li>
      </ul>
      <ReportButton api={api} batchId={batch.batchId} />
    </section>
  );
}
