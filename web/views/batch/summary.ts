import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type Api, type BatchSummary, batchPath } from '../../api';
import { usePoll } from '../../hooks';
import { rememberBatch } from '../../session';
import { GRID_PAGE } from './image-grid';

/**
 * The last summary shown of each batch: a page coming back to the batch lays out at once as it was left (its labels,
 * its counts), so focus and scroll return to the card before the fresh summary arrives, and nothing moves under them.
 */
const lastSummary = new Map<string, BatchSummary>();

/**
 * The batch's summary, read at once and every 2 s until the batch is done, and the grid's generation: a new one when
 * outcomes changed (the reader sees results arrive while the batch processes), unless a long grid the reader may be
 * scrolling would be replaced under them (`stale`: they are offered the new results).
 */
export function useBatchSummary(api: Api, batchId: string) {
  const [batch, setBatch] = useState<BatchSummary | null>(() => lastSummary.get(batchId) ?? null);
  const [error, setError] = useState<unknown>(null);
  const [generation, setGeneration] = useState(0);
  const seen = useRef<string | null>(null);
  const [stale, setStale] = useState(false);
  const shownCount = useRef(0);

  /** A summary read or answered to an action; `regrid`: outcomes changed (a new cat threshold), read the grid again. */
  const show = useCallback(
    (summary: BatchSummary, regrid = false) => {
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
        if (shownCount.current <= GRID_PAGE) setGeneration((g) => g + 1);
        else setStale(true);
      }
      seen.current = signature;
    },
    [batchId],
  );
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

  const showNewResults = () => {
    setStale(false);
    setGeneration((g) => g + 1);
  };
  /** The batch erased: nothing of it shown again. */
  const forget = () => {
    erased.current = true;
    lastSummary.delete(batchId);
  };

  return { batch, error, generation, stale, shownCount, show, showNewResults, forget };
}
