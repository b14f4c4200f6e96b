import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type Api, type BatchSummary, batchPath, isNotFound, type Page, type Usage } from '../api';
import { capabilities } from '../capabilities';
import { when } from '../format';
import { usePoll } from '../hooks';
import { href } from '../route';
import { forgetBatch, knownBatches, rememberBatch, takeLastErased, wasErased } from '../session';
import { loadUsage } from '../usage';
import { importChip } from './batch/import-panel';
import { BatchProgress, Counts, ErrorNote, StatusChip } from './common';

const PAGE = 50;

/**
 * The client's batches, newest first (GET /v1/batches). An API without that route lists the batches opened or created
 * in this tab instead, each read by its own GET.
 */
async function loadBatches(api: Api, cursor?: string): Promise<{ page: Page<BatchSummary>; listed: boolean }> {
  if ((await capabilities()).serves('GET', '/v1/batches')) {
    try {
      return { page: await api.get<Page<BatchSummary>>('/v1/batches', { limit: PAGE, cursor }), listed: true };
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  const items: BatchSummary[] = [];
  for (const batchId of knownBatches()) {
    try {
      items.push(await api.get<BatchSummary>(batchPath(batchId)));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      forgetBatch(batchId);
    }
  }
  items.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return { page: { items }, listed: false };
}

const count = (n: number) => n.toLocaleString('en');

/** One line: the day's images against the quota, what is left, what went over it, and the request rate. */
function UsageNote({ usage }: { usage: Usage }) {
  const { images, limits } = usage;
  const full = images.remaining === 0;
  return (
    <p class={`usage${full ? ' usage-full' : ''}`} data-usage="">
      <span>
        Today (UTC): <strong>{count(images.accepted)}</strong> of {count(limits.imagesPerDay)} images
      </span>
      <span class="usage-state">
        {full ? 'quota used up: new uploads fail as QuotaExceeded until 00:00 UTC' : `${count(images.remaining)} left`}
      </span>
      {images.rejected > 0 && <span>{count(images.rejected)} over the quota</span>}
      <span>
        {count(limits.requestsPerSecond)} requests/s (bursts of {count(limits.burst)})
      </span>
    </p>
  );
}

/** One row per batch: its name, state, progress, counts and creation time. */
function BatchRows({ batches }: { batches: BatchSummary[] }) {
  return (
    <ul class="batch-list" aria-live="polite">
      {batches.map((b) => (
        <li key={b.batchId} class="batch-row" data-batch={b.batchId} data-status={b.status}>
          <div class="batch-head">
            <a href={href.batch(b.batchId)} class="batch-name">
              {b.batchId}
            </a>
            <StatusChip status={b.status} />
            {b.debug && <span class="chip">debug</span>}
            {b.import && <span class="chip">{importChip(b.import)}</span>}
          </div>
          <BatchProgress batch={b} />
          <Counts batch={b} />
          <p class="muted">Created {when(b.createdAt)}</p>
        </li>
      ))}
    </ul>
  );
}

/** Any batch opened by its name (remembered in this tab, for an API that does not list batches). */
function OpenBatchForm() {
  const [openId, setOpenId] = useState('');
  const open = (e: Event) => {
    e.preventDefault();
    const id = openId.trim();
    if (!id) return;
    rememberBatch(id);
    location.hash = href.batch(id);
  };
  return (
    <form class="inline-form" onSubmit={open}>
      <label for="open-batch">Open a batch by name</label>
      <input
        id="open-batch"
        value={openId}
        pattern="[A-Za-z0-9_\-]{1,64}"
        onInput={(e) => setOpenId((e.target as HTMLInputElement).value)}
      />
      <button type="submit">Open</button>
    </form>
  );
}

export function BatchList({ api }: { api: Api }) {
  const [batches, setBatches] = useState<BatchSummary[] | null>(null);
  const [cursor, setCursor] = useState<string | undefined>();
  const [listed, setListed] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [usage, setUsage] = useState<Usage | null>(null);
  const [erasedNotice] = useState(takeLastErased);
  const shown = useRef(batches);
  shown.current = batches;

  const refresh = useCallback(async () => {
    try {
      // Both before either shows: the usage line appearing above a list already drawn would move the list.
      const [{ page, listed: all }, today] = await Promise.all([loadBatches(api), loadUsage(api).catch(() => null)]);
      setListed(all);
      // Keep the pages beyond the first that "Show more" loaded; the first page is replaced by fresher counts.
      const old = shown.current ?? [];
      const fresh = new Set(page.items.map((b) => b.batchId));
      setBatches([...page.items, ...old.slice(PAGE).filter((b) => !fresh.has(b.batchId))].filter((b) => !wasErased(b.batchId)));
      if (old.length <= PAGE) setCursor(page.cursor);
      setUsage(today);
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, [api]);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const busy = (batches ?? []).some((b) => b.status !== 'done');
  usePoll(refresh, 2000, busy);

  const more = async () => {
    try {
      const page = await api.get<Page<BatchSummary>>('/v1/batches', { limit: PAGE, cursor });
      setBatches((old) => [
        ...(old ?? []),
        ...page.items.filter((b) => !wasErased(b.batchId) && !(old ?? []).some((o) => o.batchId === b.batchId)),
      ]);
      setCursor(page.cursor);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section aria-labelledby="batches-title">
      <div class="title-row">
        <h1 id="batches-title">Batches</h1>
        <a class="button" href={href.newBatch()}>
          New batch
        </a>
      </div>
      {usage && <UsageNote usage={usage} />}
      {erasedNotice && (
        <p role="status" class="notice">
          Deleted batch {erasedNotice}.
        </p>
      )}
      <ErrorNote error={error} />
      {batches === null && !error && <p aria-live="polite">Loading…</p>}
      {batches !== null && batches.length === 0 && (
        <p>
          No batches yet. <a href={href.newBatch()}>Upload images</a> to start one.
        </p>
      )}
      {batches !== null && batches.length > 0 && <BatchRows batches={batches} />}
      {listed && cursor && (
        <button type="button" onClick={more}>
          Show more batches
        </button>
      )}
      {!listed && <p class="muted">This API lists only the batches opened in this tab. Open another by its name:</p>}
      <OpenBatchForm />
    </section>
  );
}
