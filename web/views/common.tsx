import type { BatchSummary } from '../api';
import { nameParts, plural, progressOf } from '../format';

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
      {typeof c.reviewed === 'number' && c.reviewed > 0 && (
        <li>
          {c.reviewed} reviewed{typeof c.corrected === 'number' ? `, ${c.corrected} corrected` : ''}
        </li>
      )}
    </ul>
  );
}

/** Dollars as a price reads: up to four decimals, never float noise ($0.007, $1.2345). */
export const dollars = (usd: number): string => `$${Number(usd.toFixed(4))}`;

/** What the batch cost in DetectLabels calls and what reuse and duplicates saved (absent from older servers). */
export function Usage({ batch }: { batch: BatchSummary }) {
  const u = batch.usage;
  if (!u) return null;
  return (
    <p class="usage" aria-label="Cost">
      Cost: {plural(u.detectLabelsCalls, 'DetectLabels call')}, about {dollars(u.estimatedCostUsd)}
      {u.reused + u.duplicates > 0 && ` · saved ${dollars(u.savedUsd)} (${u.reused} reused, ${plural(u.duplicates, 'duplicate')})`}
    </p>
  );
}

/**
 * A file name that may wrap only after `/`, `_`, `-` or `.` (a <wbr> there), never inside a word: "cat_kitten_boxed.jpg"
 * wraps as "cat_kitten_" / "boxed.jpg".
 */
export function FileName({ name }: { name: string }) {
  return <>{nameParts(name).map((p, i) => (i === 0 ? p : [<wbr key={i} />, p]))}</>;
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {(error as Error).message ?? String(error)}
    </p>
  );
}

/** Arrow keys move between a list's image links (the grid's cards, a group's members), Home and End to the first and last. */
export function onGridKey(e: KeyboardEvent) {
  const links = [...(e.currentTarget as HTMLElement).querySelectorAll<HTMLAnchorElement>('a[data-fprint]')];
  const at = links.indexOf(document.activeElement as HTMLAnchorElement);
  if (at < 0) return;
  const top = links[0]?.offsetTop ?? 0;
  const firstBelow = links.findIndex((l) => l.offsetTop !== top);
  const columns = firstBelow === -1 ? links.length : Math.max(1, firstBelow);
  const next = { ArrowRight: at + 1, ArrowLeft: at - 1, ArrowDown: at + columns, ArrowUp: at - columns, Home: 0, End: links.length - 1 }[
    e.key
  ];
  if (next === undefined) return;
  e.preventDefault();
  links[Math.min(links.length - 1, Math.max(0, next))]?.focus();
}
