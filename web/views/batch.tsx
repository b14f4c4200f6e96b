import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiRequestError, batchPath, isNotFound, type Api, type BatchSummary, type Image, type Page, type Query } from '../api';
import { capabilities } from '../capabilities';
import { capturedWhen, catBadge, plural, topLabels, when } from '../format';
import { useCapabilities, useNearViewport, usePoll } from '../hooks';
import { href } from '../route';
import { forgetErasedBatch, rememberBatch } from '../session';
import { BatchActions } from './batch-actions';
import { BatchProgress, Counts, ErrorNote, FileName, onGridKey, StatusChip, Usage } from './common';
import { knownGroupCount, NearDuplicates } from './near-duplicates';
import { Thumb } from './thumb';

interface Filter {
  label: string;
  /** What the API filters by. */
  query: Query;
  /** What the page filters by on top, where the API has no such filter. */
  keep?: (image: Image) => boolean;
  /** Used when the API refuses `query` (an API without the `cat` filter on batch images). */
  fallback?: { query: Query; keep: (image: Image) => boolean };
}

export const FILTERS: Record<string, Filter> = {
  all: { label: 'All', query: {} },
  cats: { label: 'Cats', query: { cat: 'true' }, fallback: { query: { status: 'success' }, keep: (i) => i.isCat === true } },
  'not-cats': { label: 'Not cats', query: { cat: 'false' }, fallback: { query: { status: 'success' }, keep: (i) => i.isCat === false } },
  failed: { label: 'Failed', query: { status: 'fail' } },
  duplicates: { label: 'Duplicates', query: {}, keep: (i) => i.duplicates > 0 },
  // The images with a capture time, oldest first (the API's batch-captured index).
  captured: { label: 'By capture time', query: { order: 'captured' } },
};

/** A label filter's name in the route: `label:<threshold>:<label>`, the threshold the batch's label counts use. */
export const labelFilterName = (label: string, minConfidence: number | null | undefined): string => `label:${minConfidence ?? 0}:${label}`;

/** The filter a route names: one of FILTERS, or a label at a threshold (`label:80:Dog`); undefined for any other name. */
export function filterOf(name: string): Filter | undefined {
  if (FILTERS[name]) return FILTERS[name];
  const m = /^label:(\d{1,3}(?:\.\d+)?):(.{1,100})$/.exec(name);
  if (!m) return undefined;
  return { label: m[2]!, query: { label: m[2]!, minConfidence: m[1]! } };
}

/** The images by capture time (`?filter=captured`): shown after the filters and the near-duplicates. */
export const CAPTURED = 'captured';

/** The view of near-duplicate groups, beside the filters (`?filter=near-duplicates`). */
export const NEAR = 'near-duplicates';

const PAGE = 100;
/** Visible images one load aims for before waiting for the reader to scroll. */
const SCREENFUL = 48;
let catFilterRefused = false;

async function fetchPage(api: Api, batchId: string, filter: Filter, cursor?: string): Promise<{ items: Image[]; cursor?: string }> {
  if (filter.fallback && !(await capabilities()).takes('GET', `${batchPath(batchId)}/images`, 'cat')) catFilterRefused = true;
  const useFallback = filter.fallback && catFilterRefused;
  const query = useFallback ? filter.fallback!.query : filter.query;
  const keep = useFallback ? filter.fallback!.keep : filter.keep;
  try {
    const page = await api.get<Page<Image>>(`${batchPath(batchId)}/images`, { ...query, limit: PAGE, cursor });
    return { items: keep ? page.items.filter(keep) : page.items, cursor: page.cursor };
  } catch (error) {
    if (filter.fallback && !catFilterRefused && error instanceof ApiRequestError && error.status === 400 && /\bcat\b/.test(error.message)) {
      catFilterRefused = true;
      return fetchPage(api, batchId, filter, undefined);
    }
    throw error;
  }
}

/** A batch's images page by page, under one filter: the first screenful at once, the rest as the reader scrolls. */
function useImages(api: Api, batchId: string, filterName: string, generation: number) {
  const filter = filterOf(filterName) ?? FILTERS.all!;
  const [images, setImages] = useState<Image[]>([]);
  // Done for one view only: a render of a new filter never shows the previous one's "all loaded".
  const view = `${batchId}/${filterName}/${generation}`;
  const [doneFor, setDoneFor] = useState<string | null>(null);
  const done = doneFor === view;
  const [error, setError] = useState<unknown>(null);
  const state = useRef({ cursor: undefined as string | undefined, loading: false, ended: false, run: 0, replace: false });
  const shownFor = useRef(`${batchId}/${filterName}`);

  useEffect(() => {
    // A new generation of the same view replaces the images when its first page arrives (no flash of an empty grid).
    state.current = { cursor: undefined, loading: false, ended: false, run: state.current.run + 1, replace: true };
    if (shownFor.current !== `${batchId}/${filterName}`) setImages([]);
    shownFor.current = `${batchId}/${filterName}`;
    setError(null);
  }, [batchId, filterName, generation]);

  const loadMore = useCallback(async () => {
    const s = state.current;
    // Ended: a call before the re-render that hides the sentinel would otherwise read the first page again onto the grid.
    if (s.loading || s.ended) return;
    s.loading = true;
    const run = s.run;
    try {
      let added: Image[] = [];
      let cursor = s.cursor;
      let end = false;
      do {
        const page = await fetchPage(api, batchId, filter, cursor);
        if (run !== state.current.run) return;
        added = added.concat(page.items);
        cursor = page.cursor;
        end = !cursor;
      } while (!end && added.length < SCREENFUL);
      s.cursor = cursor;
      s.ended = end;
      const replace = s.replace;
      s.replace = false;
      setImages((old) => (replace ? added : [...old, ...added]));
      if (end) setDoneFor(view);
    } catch (err) {
      if (run === state.current.run) setError(err);
    } finally {
      if (run === state.current.run) s.loading = false;
    }
  }, [api, batchId, filter, view]);

  // Each view's first screenful is read at once, wherever the reader has scrolled to; the rest as they scroll.
  useEffect(() => {
    void loadMore();
  }, [loadMore]);

  return { images, done, error, loadMore };
}

function Card({ image, batchId, index }: { image: Image; batchId: string; index: number }) {
  return (
    <li>
      <a class="card" href={href.image(batchId, image.fprint)} data-fprint={image.fprint} data-status={image.status}>
        <Thumb image={image} eager={index < 12} />
        {image.isCat && <span class="badge badge-cat">{catBadge(image)}</span>}
        {image.status !== 'success' && <span class={`badge badge-${image.status}`}>{image.status}</span>}
        <span class="card-name">
          <FileName name={image.fileName ?? image.fprint} />
        </span>
        {(image.labels.length > 0 || image.isCat) && <span class="card-labels">{topLabels(image)}</span>}
        {image.capturedAt && <span class="card-captured">{capturedWhen(image.capturedAt)}</span>}
        {image.error && (
          <span class="card-error">
            {image.error.code}: {image.error.message}
          </span>
        )}
        {image.duplicates > 0 && (
          <span class="card-dups">
            {plural(image.duplicates, 'duplicate')}
            {image.duplicateFiles?.map((f, i) => (
              <span key={f}>
                {i === 0 ? ': ' : ', '}
                <FileName name={f} />
              </span>
            ))}
          </span>
        )}
      </a>
    </li>
  );
}

function saveBlob(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function ExportButtons({ api, batchId }: { api: Api; batchId: string }) {
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const download = async (format: 'csv' | 'jsonl' | 'megadetector') => {
    setBusy(true);
    setMessage(null);
    // The MegaDetector results file is JSON: Timelapse and AddaxAI open a .json.
    const name = `${batchId}.${format === 'megadetector' ? 'json' : format}`;
    try {
      saveBlob(await api.blob(`${batchPath(batchId)}/export`, { format }), name);
      setMessage(`Saved ${name}.`);
    } catch (error) {
      setMessage(isNotFound(error) ? 'This API has no export yet.' : `Export failed: ${(error as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="exports" role="group" aria-label="Export">
      <button type="button" disabled={busy} onClick={() => download('csv')}>
        Export CSV
      </button>
      <button type="button" disabled={busy} onClick={() => download('jsonl')}>
        Export JSONL
      </button>
      <button type="button" disabled={busy} onClick={() => download('megadetector')} title="MegaDetector results file (format 1.6) for Timelapse or AddaxAI">
        Export MegaDetector
      </button>
      {message && (
        <span role="status" class="muted">
          {message}
        </span>
      )}
    </div>
  );
}

/** The batch's images under one filter: the first screenful at once, the rest as the reader scrolls. */
function ImageGrid({ api, batchId, filterName, generation, shownCount }: { api: Api; batchId: string; filterName: string; generation: number; shownCount: { current: number } }) {
  const { images, done, error, loadMore } = useImages(api, batchId, filterName, generation);
  shownCount.current = images.length;
  const sentinel = useNearViewport(loadMore, !done && !error, [images.length, generation, filterName]);
  return (
    <>
      <ErrorNote error={error} />
      <ul class="grid" aria-label={`${(filterOf(filterName) ?? FILTERS.all!).label} images`} aria-busy={!done} onKeyDown={onGridKey}>
        {images.map((image, i) => (
          <Card key={image.fprint} image={image} batchId={batchId} index={i} />
        ))}
      </ul>
      {done && images.length === 0 && <p class="muted">No images here.</p>}
      {!done && (
        <p ref={sentinel as never} class="muted loading" aria-live="polite">
          Loading images…
        </p>
      )}
    </>
  );
}

/** The view of the batch chosen last, so the way back from one image leads to it. */
const lastView = new Map<string, string>();
export const batchHref = (batchId: string): string => href.batch(batchId, lastView.get(batchId));

/**
 * The last summary shown of each batch: a page coming back to the batch lays out at once as it was left (its labels,
 * its counts), so focus and scroll return to the card before the fresh summary arrives, and nothing moves under them.
 */
const lastSummary = new Map<string, BatchSummary>();

export function BatchView({ api, batchId, filter }: { api: Api; batchId: string; filter: string }) {
  const [batch, setBatch] = useState<BatchSummary | null>(() => lastSummary.get(batchId) ?? null);
  const [error, setError] = useState<unknown>(null);
  const [generation, setGeneration] = useState(0);
  const caps = useCapabilities();
  const servesSimilar = caps?.serves('GET', `${batchPath(batchId)}/similar`) ?? false;
  // Review mode needs the verdict route and the review queue (DESIGN §10).
  const servesReview = (caps?.serves('PUT', `${batchPath(batchId)}/images/x/review`) && caps.takes('GET', `${batchPath(batchId)}/images`, 'review')) ?? false;
  const near = filter === NEAR;
  const filterName = near || filterOf(filter) ? filter : 'all';
  lastView.set(batchId, filterName);
  const seen = useRef<string | null>(null);
  const [stale, setStale] = useState(false);
  const shownCount = useRef(0);
  if (near) shownCount.current = 0;
  // How many groups, once read: kept from a done batch's answer; an unfinished batch's only while it is unfinished.
  const [groupCount, setGroupCount] = useState<{ count: number; final: boolean } | null>(() => {
    const count = knownGroupCount(api, batchId);
    return count === null ? null : { count, final: true };
  });
  const nearCount = groupCount && (groupCount.final || batch?.status !== 'done') ? groupCount.count : null;

  /** A summary read or answered to an action; `regrid`: outcomes changed (a new cat threshold), read the grid again. */
  const show = useCallback((summary: BatchSummary, regrid = false) => {
    lastSummary.set(batchId, summary);
    setBatch(summary);
    setError(null);
    // New outcomes: read the grid again (the reader sees results arrive while the batch processes).
    const signature = JSON.stringify([summary.status, summary.counts]);
    if (regrid) {
      setStale(false);
      setGeneration((g) => g + 1);
    } else if (seen.current !== null && seen.current !== signature) {
      // A long grid the reader may be scrolling is not replaced under them: they are offered the new results.
      if (shownCount.current <= PAGE) setGeneration((g) => g + 1);
      else setStale(true);
    }
    seen.current = signature;
  }, [batchId]);
  // Once erased, a summary still on its way must not show the batch again (nor its 404).
  const erased = useRef(false);

  const refresh = useCallback(async () => {
    try {
      const summary = await api.get<BatchSummary>(batchPath(batchId));
      if (erased.current) return;
      rememberBatch(batchId);
      show(summary);
    } catch (err) {
      if (!erased.current) setError(err);
    }
  }, [api, batchId, show]);

  useEffect(() => {
    void refresh();
  }, [refresh]);
  usePoll(refresh, 2000, batch !== null && batch.status !== 'done');

  if (error) {
    return (
      <section>
        <h1>Batch {batchId}</h1>
        <ErrorNote error={isNotFound(error) ? new Error(`No batch named ${batchId} for this key.`) : error} />
        <a href={href.batches()}>All batches</a>
      </section>
    );
  }

  return (
    <section aria-labelledby="batch-title">
      <p class="crumbs">
        <a href={href.batches()}>Batches</a> /
      </p>
      <div class="title-row">
        <h1 id="batch-title">{batchId}</h1>
        {batch && <StatusChip status={batch.status} />}
      </div>
      {batch && (
        <div class="summary" aria-live="polite">
          <BatchProgress batch={batch} />
          <Counts batch={batch} />
          <Usage batch={batch} />
          <p class="muted">
            Created {when(batch.createdAt)}
            {batch.doneAt ? ` · done ${when(batch.doneAt)}` : ''}
          </p>
        </div>
      )}
      <div class="toolbar">
        {caps?.serves('GET', `${batchPath(batchId)}/export`) && <ExportButtons api={api} batchId={batchId} />}
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
      {batch && (
        <BatchActions
          api={api}
          batch={batch}
          onSummary={show}
          onErased={() => {
            erased.current = true;
            forgetErasedBatch(batchId);
            lastSummary.delete(batchId);
            location.hash = href.batches();
          }}
        />
      )}
      <nav class="filters" aria-label="Filter images">
        {Object.entries(FILTERS).filter(([name]) => name !== CAPTURED).map(([name, f]) => (
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
      {batch?.labels && batch.labels.length > 0 && (
        <nav class="filters label-filters" aria-label="Filter by label">
          <span class="muted">Labels:</span>
          {batch.labels.map((l) => {
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
      )}
      {stale && !near && (
        <button
          type="button"
          onClick={() => {
            setStale(false);
            setGeneration((g) => g + 1);
          }}
        >
          New results: show them
        </button>
      )}
      {!near && <ImageGrid api={api} batchId={batchId} filterName={filterName} generation={generation} shownCount={shownCount} />}
      {/* Once the summary came: a batch this key cannot see gets no request bound to fail. */}
      {near && batch && servesSimilar && (
        <NearDuplicates api={api} batchId={batchId} done={batch.status === 'done'} onGroups={(count, final) => setGroupCount({ count, final })} />
      )}
      {near && caps && !servesSimilar && <p class="muted">This API does not group near-duplicates yet.</p>}
    </section>
  );
}
