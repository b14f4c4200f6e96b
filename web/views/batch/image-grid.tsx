import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type Api, ApiRequestError, batchPath, type Image, type Page } from '../../api';
import { capabilities } from '../../capabilities';
import { capturedWhen, catBadge, plural, topLabels } from '../../format';
import { useNearViewport } from '../../hooks';
import { href } from '../../route';
import { ErrorNote, FileName, onGridKey } from '../common';
import { Thumb } from '../thumb';
import { FILTERS, type Filter, filterOf } from './filters';

/** Images one page of the listing asks for. */
export const GRID_PAGE = 100;
/** Visible images one load aims for before waiting for the reader to scroll. */
const SCREENFUL = 48;
let catFilterRefused = false;

async function fetchPage(api: Api, batchId: string, filter: Filter, cursor?: string): Promise<{ items: Image[]; cursor?: string }> {
  if (filter.fallback && !(await capabilities()).takes('GET', `${batchPath(batchId)}/images`, 'cat')) catFilterRefused = true;
  const useFallback = filter.fallback && catFilterRefused;
  const query = useFallback ? filter.fallback!.query : filter.query;
  const keep = useFallback ? filter.fallback!.keep : filter.keep;
  try {
    const page = await api.get<Page<Image>>(`${batchPath(batchId)}/images`, { ...query, limit: GRID_PAGE, cursor });
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

/** The batch's images under one filter: the first screenful at once, the rest as the reader scrolls. */
export function ImageGrid({
  api,
  batchId,
  filterName,
  generation,
  shownCount,
}: {
  api: Api;
  batchId: string;
  filterName: string;
  generation: number;
  shownCount: { current: number };
}) {
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
