import type { BatchSummary } from '../api';
import { plural, progressOf } from '../format';

export function StatusChip({ status }: { status: string }) {
  return <span class={`chip chip-${status}`}>{status}</span>;
}

export function BatchProgress({ batch }: { batch: BatchSummary }) {
  const { finished, of } = progressOf(batch);
  const id = `progress-${batch.batchId}`;
  return (
    <div class="progress">
      <progress id={id} max={Math.max(of, 1)} value={finished} aria-label={`${batch.batchId}: ${finished} of ${of} files done`} />
      <span class="progress-text">
        {finished} of {of} done
      </span>
    </div>
  );
}

export function Counts({ batch }: { batch: BatchSummary }) {
  const c = batch.counts;
  return (
    <ul class="counts" aria-label="Counts">
      <li>{plural(c.cats, 'cat')}</li>
      <li>{c.success} classified</li>
      <li>{c.fail} failed</li>
      <li>{plural(c.duplicate, 'duplicate')}</li>
      {typeof c.pending === 'number' && c.pending > 0 && <li>{c.pending} pending</li>}
    </ul>
  );
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {(error as Error).message ?? String(error)}
    </p>
  );
}
