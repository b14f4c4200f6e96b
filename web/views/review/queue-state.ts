import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type Api, batchPath, type Image, type Page } from '../../api';
import {
  emptyQueue,
  listingQuery,
  type ReviewQueue,
  type ReviewSource,
  replaced,
  restart,
  switched,
  wantsMore,
  withPage,
} from '../../review';

const PAGE = 25;

const imagePath = (batchId: string, fprint: string) => batchPath(batchId, `/images/${encodeURIComponent(fprint)}`);

/**
 * The queue of unreviewed images, read page by page whenever it runs low, the next two pictures fetched before they
 * are shown. The queue lives in a ref (the key handler and the API's answers read the latest) mirrored into state
 * (for rendering). `source` is the listing read: the uncertain first or the audit sample; another one starts it afresh.
 */
export function useReviewQueue(
  api: Api,
  path: string,
  batchId: string,
  loadError: unknown,
  setLoadError: (error: unknown) => void,
  source: ReviewSource = 'uncertain',
) {
  const queueRef = useRef<ReviewQueue>(emptyQueue());
  const [queue, setQueueState] = useState<ReviewQueue>(queueRef.current);
  const setQueue = (next: ReviewQueue) => {
    queueRef.current = next;
    setQueueState(next);
  };
  /** Bumped when the listing is read again from its start: pages of an older reading are dropped. */
  const reading = useRef({ run: 0, loading: false });
  const [readingRun, setReadingRun] = useState(0);
  const [loadingFirst, setLoadingFirst] = useState(true);
  const restale = useRef(new Set<string>());

  const loadMore = useCallback(async () => {
    const r = reading.current;
    if (r.loading || !wantsMore(queueRef.current)) return;
    r.loading = true;
    const run = r.run;
    try {
      const page = await api.get<Page<Image>>(`${path}/images`, {
        ...listingQuery(source),
        limit: PAGE,
        cursor: queueRef.current.cursor,
      });
      if (run !== reading.current.run) return;
      setQueue(withPage(queueRef.current, page.items, page.cursor));
    } catch (error) {
      if (run === reading.current.run) setLoadError(error);
    } finally {
      if (run === reading.current.run) {
        r.loading = false;
        setLoadingFirst(false);
      }
    }
  }, [api, path, source]);

  const readAgain = (from: (q: ReviewQueue) => ReviewQueue = restart) => {
    reading.current = { run: reading.current.run + 1, loading: false };
    setQueue(from(queueRef.current));
    setLoadError(null);
    setReadingRun(reading.current.run);
  };

  // Another listing chosen: read from its start (not on the first render), before the next page is asked for.
  const shownSource = useRef(source);
  useEffect(() => {
    if (shownSource.current === source) return;
    shownSource.current = source;
    setLoadingFirst(true);
    readAgain(switched);
  }, [source]);

  // Whenever the queue runs low: its next page.
  useEffect(() => {
    if (!loadError) void loadMore();
  }, [queue, readingRun, loadMore, loadError]);

  usePreloaded(queue);

  /** A picture whose presigned URL expired: its image asked for again, once. */
  const stale = (old: Image) => {
    if (restale.current.has(old.fprint)) return;
    restale.current.add(old.fprint);
    api.get<Image>(imagePath(batchId, old.fprint)).then(
      (fresh) => setQueue(replaced(queueRef.current, fresh)),
      () => undefined,
    );
  };

  return { queue, queueRef, setQueue, loadingFirst, readAgain: () => readAgain(), readFresh: () => readAgain(switched), stale };
}

export type ReviewQueueState = ReturnType<typeof useReviewQueue>;

/** The next two pictures, fetched before they are shown. */
function usePreloaded(queue: ReviewQueue): void {
  const preloaded = useRef(new Set<string>());
  useEffect(() => {
    for (const next of queue.queue.slice(1, 3)) {
      const url = next.imageUrl ?? next.thumbnailUrl;
      if (!url || preloaded.current.has(url)) continue;
      preloaded.current.add(url);
      const img = new Image();
      img.src = url;
    }
  }, [queue]);
}
