// One batch: its summary (polled until done), its actions and exports, and its images under a filter (or its
// near-duplicate groups). Its parts are in batch/: the filters, the grid, the exports, the summary.
import { useState } from 'preact/hooks';
import { type Api, type BatchSummary, batchPath, isNotFound } from '../api';
import { when } from '../format';
import { useCapabilities } from '../hooks';
import { href } from '../route';
import { forgetErasedBatch } from '../session';
import { ExportButtons } from './batch/export-buttons';
import { FilterTabs, LabelTabs } from './batch/filter-tabs';
import { filterOf, NEAR } from './batch/filters';
import { ImageGrid } from './batch/image-grid';
import { ImportPanel } from './batch/import-panel';
import { useBatchSummary } from './batch/summary';
import { BatchActions } from './batch-actions';
import { BatchProgress, Counts, ErrorNote, StatusChip, Usage } from './common';
import { knownGroupCount, NearDuplicates } from './near-duplicates';

/** The view of the batch chosen last, so the way back from one image leads to it. */
const lastView = new Map<string, string>();
export const batchHref = (batchId: string): string => href.batch(batchId, lastView.get(batchId));

/**
 * How many near-duplicate groups, once read: kept from a done batch's answer; an unfinished batch's only while it is
 * unfinished.
 */
function useNearCount(api: Api, batchId: string, batch: BatchSummary | null) {
  const [groupCount, setGroupCount] = useState<{ count: number; final: boolean } | null>(() => {
    const count = knownGroupCount(api, batchId);
    return count === null ? null : { count, final: true };
  });
  const nearCount = groupCount && (groupCount.final || batch?.status !== 'done') ? groupCount.count : null;
  return { nearCount, onGroups: (count: number, final: boolean) => setGroupCount({ count, final }) };
}

/** The batch's state, counts, usage and times. */
function BatchSummaryPanel({ batch }: { batch: BatchSummary }) {
  return (
    <div class="summary" aria-live="polite">
      <BatchProgress batch={batch} />
      <Counts batch={batch} />
      <Usage batch={batch} />
      <p class="muted">
        Created {when(batch.createdAt)}
        {batch.doneAt ? ` · done ${when(batch.doneAt)}` : ''}
      </p>
    </div>
  );
}

/** Exports, the debug logs and review mode, where the API and the batch have them. */
function BatchToolbar({
  api,
  batchId,
  batch,
  servesExport,
  servesReview,
}: {
  api: Api;
  batchId: string;
  batch: BatchSummary | null;
  servesExport: boolean;
  servesReview: boolean;
}) {
  return (
    <div class="toolbar">
      {servesExport && <ExportButtons api={api} batchId={batchId} />}
      {batch?.debug && (
        <a class="button" href={href.logs(batchId)}>
          Logs
        </a>
      )}
      {batch && servesReview && batch.counts.success > 0 && (
        <a class="button" href={href.review(batchId)}>
          Review
        </a>
      )}
    </div>
  );
}

function BatchNotFound({ batchId, error }: { batchId: string; error: unknown }) {
  return (
    <section>
      <h1>Batch {batchId}</h1>
      <ErrorNote error={isNotFound(error) ? new Error(`No batch named ${batchId} for this key.`) : error} />
      <a href={href.batches()}>All batches</a>
    </section>
  );
}

export function BatchView({ api, batchId, filter }: { api: Api; batchId: string; filter: string }) {
  const caps = useCapabilities();
  const summary = useBatchSummary(api, batchId);
  const { batch, error, generation, stale, shownCount } = summary;
  const servesSimilar = caps?.serves('GET', `${batchPath(batchId)}/similar`) ?? false;
  // Review mode needs the verdict route and the review queue (DESIGN §10).
  const servesReview =
    (caps?.serves('PUT', `${batchPath(batchId)}/images/x/review`) && caps.takes('GET', `${batchPath(batchId)}/images`, 'review')) ?? false;
  const near = filter === NEAR;
  const filterName = near || filterOf(filter) ? filter : 'all';
  lastView.set(batchId, filterName);
  if (near) shownCount.current = 0;
  const { nearCount, onGroups } = useNearCount(api, batchId, batch);

  if (error) return <BatchNotFound batchId={batchId} error={error} />;

  return (
    <section aria-labelledby="batch-title">
      <p class="crumbs">
        <a href={href.batches()}>Batches</a> /
      </p>
      <div class="title-row">
        <h1 id="batch-title">{batchId}</h1>
        {batch && <StatusChip status={batch.status} />}
      </div>
      {batch && <BatchSummaryPanel batch={batch} />}
      {batch && <ImportPanel api={api} batch={batch} />}
      <BatchToolbar
        api={api}
        batchId={batchId}
        batch={batch}
        servesExport={caps?.serves('GET', `${batchPath(batchId)}/export`) ?? false}
        servesReview={servesReview}
      />
      {batch && (
        <BatchActions
          api={api}
          batch={batch}
          onSummary={summary.show}
          onErased={() => {
            summary.forget();
            forgetErasedBatch(batchId);
            location.hash = href.batches();
          }}
        />
      )}
      <FilterTabs batchId={batchId} filterName={filterName} near={near} servesSimilar={servesSimilar} nearCount={nearCount} />
      {batch?.labels && batch.labels.length > 0 && <LabelTabs batchId={batchId} batch={batch} filterName={filterName} />}
      {stale && !near && (
        <button type="button" onClick={summary.showNewResults}>
          New results: show them
        </button>
      )}
      {!near && <ImageGrid api={api} batchId={batchId} filterName={filterName} generation={generation} shownCount={shownCount} />}
      {/* Once the summary came: a batch this key cannot see gets no request bound to fail. */}
      {near && batch && servesSimilar && <NearDuplicates api={api} batchId={batchId} done={batch.status === 'done'} onGroups={onGroups} />}
      {near && caps && !servesSimilar && <p class="muted">This API does not group near-duplicates yet.</p>}
    </section>
  );
}
