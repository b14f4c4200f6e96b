import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type Api, type Image, reviewPath } from '../../api';
import { catConfidence } from '../../format';
import { again, current, judge, machineSays, type ReviewQueue, refused, restored, skip, undo } from '../../review';
import type { ReviewQueueState } from './queue-state';

export const nameOf = (image: Image) => image.fileName ?? image.fprint;

/** What is shown after a move, for its announcement. */
function nowShowing(next: ReviewQueue): string {
  const upcoming = current(next);
  return upcoming
    ? ` Now: ${nameOf(upcoming)}, the detector says ${machineSays(upcoming, catConfidence(upcoming))}.`
    : !next.ended
      ? ''
      : next.skipped.length === 1
        ? ' Only the skipped image is left.'
        : next.skipped.length > 1
          ? ` Only the ${next.skipped.length} skipped images are left.`
          : ' Nothing left to review.';
}

/**
 * A verdict that emptied the queue took its buttons with it: focus goes to what is there now, never to nowhere. A
 * layout effect, run as the DOM changes: a plain one could run late, after the next move had set the flag again.
 */
function useRefocus() {
  const refocus = useRef(false);
  useLayoutEffect(() => {
    if (!refocus.current) return;
    refocus.current = false;
    const active = document.activeElement;
    if (active && active !== document.body && active.isConnected) return;
    document.querySelector<HTMLElement>('#review-current, #review-end')?.focus();
  });
  return refocus;
}

interface ReviewMovesOptions {
  api: Api;
  batchId: string;
  queue: ReviewQueueState;
  send: (delta: number, op: () => Promise<void>) => void;
  reviewed: number;
  of: number;
}

/**
 * The reader's moves: a verdict (cat or not), the last one taken back, a skip, the skipped images offered again. Each
 * shows at once, is announced, and (verdicts and undos) goes to the API; one the API refuses is put back.
 */
export function useReviewMoves({ api, batchId, queue: { queueRef, setQueue }, send, reviewed, of }: ReviewMovesOptions) {
  const [verdictError, setVerdictError] = useState<unknown>(null);
  const [said, setSaid] = useState('');
  const refocus = useRefocus();

  /** The announcement after a move: what was done, and what is shown now. */
  const tell = (done: string, next: ReviewQueue, reviewedNow: number) =>
    setSaid(`${done} ${reviewedNow} of ${of} reviewed.${nowShowing(next)}`);

  const give = (isCat: boolean) => {
    const judged = current(queueRef.current);
    if (!judged) return;
    const next = judge(queueRef.current, isCat);
    setQueue(next);
    setVerdictError(null);
    refocus.current = true;
    tell(`${nameOf(judged)}: ${isCat ? 'cat' : 'not a cat'}.`, next, Math.min(of, reviewed + 1));
    send(1, async () => {
      try {
        await api.put(reviewPath(batchId, judged.fprint), { isCat });
      } catch (error) {
        setQueue(refused(queueRef.current, judged.fprint));
        setVerdictError(error);
      }
    });
  };

  const takeBack = () => {
    const { queue: next, undone } = undo(queueRef.current);
    if (!undone) {
      setSaid('Nothing to undo: no verdict given here yet.');
      return;
    }
    setQueue(next);
    setVerdictError(null);
    refocus.current = true;
    tell(`Undone: ${nameOf(undone.image)} is unreviewed again.`, next, Math.max(0, reviewed - 1));
    send(-1, async () => {
      try {
        await api.del(reviewPath(batchId, undone.image.fprint));
      } catch (error) {
        setQueue(restored(queueRef.current, undone));
        setVerdictError(error);
      }
    });
  };

  const pass = () => {
    const skipped = current(queueRef.current);
    if (!skipped) return;
    const next = skip(queueRef.current);
    setQueue(next);
    refocus.current = true;
    tell(`Skipped ${nameOf(skipped)}.`, next, reviewed);
  };

  const reviewSkipped = () => {
    refocus.current = true;
    setQueue(again(queueRef.current));
  };

  return { give, takeBack, pass, reviewSkipped, said, verdictError };
}
