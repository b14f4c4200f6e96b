import type { BatchSummary } from '../../api';
import { plural } from '../../format';
import { href } from '../../route';
import { CAPTURED, FILTERS, labelFilterName, NEAR } from './filters';

interface FilterTabsProps {
  batchId: string;
  filterName: string;
  near: boolean;
  servesSimilar: boolean;
  /** How many near-duplicate groups, once known. */
  nearCount: number | null;
}

/** The filters, the near-duplicates beside them, and the capture-time order after them. */
export function FilterTabs({ batchId, filterName, near, servesSimilar, nearCount }: FilterTabsProps) {
  return (
    <nav class="filters" aria-label="Filter images">
      {Object.entries(FILTERS)
        .filter(([name]) => name !== CAPTURED)
        .map(([name, f]) => (
          <a key={name} href={href.batch(batchId, name)} class="filter" aria-current={name === filterName ? 'page' : undefined}>
            {f.label}
          </a>
        ))}
      {servesSimilar && (
        <a href={href.batch(batchId, NEAR)} class="filter" aria-current={near ? 'page' : undefined}>
          Near-duplicates
          {nearCount !== null && (
            <>
              <span class="visually-hidden"> ({plural(nearCount, 'group')})</span>
              <span class="tab-count" aria-hidden="true">
                {nearCount}
              </span>
            </>
          )}
        </a>
      )}
      {/* A sort rather than a filter: after the filters. */}
      <a href={href.batch(batchId, CAPTURED)} class="filter" aria-current={filterName === CAPTURED ? 'page' : undefined}>
        {FILTERS[CAPTURED]!.label}
      </a>
    </nav>
  );
}

/** One filter per label the batch's images carry, with how many images carry it. */
export function LabelTabs({ batchId, batch, filterName }: { batchId: string; batch: BatchSummary; filterName: string }) {
  return (
    <nav class="filters label-filters" aria-label="Filter by label">
      <span class="muted">Labels:</span>
      {batch.labels!.map((l) => {
        const name = labelFilterName(l.name, batch.catMinConfidence);
        return (
          <a key={l.name} href={href.batch(batchId, name)} class="filter" aria-current={name === filterName ? 'page' : undefined}>
            {l.name}
            <span class="visually-hidden"> ({plural(l.images, 'image')})</span>
            <span class="tab-count" aria-hidden="true">
              {l.images}
            </span>
          </a>
        );
      })}
    </nav>
  );
}
