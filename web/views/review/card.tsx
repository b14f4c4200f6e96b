import type { BatchSummary, Image } from '../../api';
import { catConfidence, plural } from '../../format';
import { machineSays, type ReviewQueue, thresholdText } from '../../review';
import { batchHref } from '../batch';
import { FileName } from '../common';
import { nameOf } from './moves';
import { ReviewPicture } from './picture';

/** How many of the batch's images are reviewed; busy while verdicts sent are not yet in the counts read back. */
export function ReviewProgress({ reviewed, of, saving }: { reviewed: number; of: number; saving: boolean }) {
  return (
    <div class="progress review-progress" aria-busy={saving}>
      <progress max={Math.max(of, 1)} value={reviewed} aria-label={`${reviewed} of ${of} reviewed`} />
      <span class="progress-text">
        {reviewed} of {of} reviewed
      </span>
    </div>
  );
}

/** The image to judge now: its name, what the detector says of it, and the picture with its boxes. */
export function ReviewCurrent({
  image,
  batch,
  queue,
  onStale,
}: {
  image: Image;
  batch: BatchSummary | null;
  queue: ReviewQueue;
  onStale: (image: Image) => void;
}) {
  return (
    <>
      <div class="review-head">
        <h2 id="review-current" tabIndex={-1}>
          <FileName name={nameOf(image)} />
        </h2>
        <p class="machine">
          The detector says <strong>{machineSays(image, catConfidence(image))}</strong>
          {batch?.catMinConfidence != null ? ` at threshold ${thresholdText(batch.catMinConfidence)}` : ''}.
          {queue.queue.length > 1 || !queue.ended ? '' : ' The last one to review.'}
        </p>
      </div>
      <ReviewPicture key={image.fprint} image={image} onStale={onStale} />
    </>
  );
}

interface ReviewEndProps {
  batchId: string;
  batch: BatchSummary | null;
  queue: ReviewQueue;
  of: number;
  loadingFirst: boolean;
  onReviewSkipped: () => void;
  onReadAgain: () => void;
  /** The audit queue: its end says so (the sample is through, or none is drawn). */
  audit?: boolean;
}

/** What the end of the queue says: skipped images left, nothing yet, or everything reviewed. */
function endTitle(queue: ReviewQueue, of: number, audit: boolean): string {
  if (queue.skipped.length > 0) return 'Only skipped images left';
  if (audit) return 'No sampled image left to review';
  return of === 0 ? 'Nothing to review yet' : 'Every image is reviewed';
}

/** No image to judge: still loading, or the queue is through (the skipped ones offered again, new ones looked for). */
export function ReviewEnd({ batchId, batch, queue, of, loadingFirst, onReviewSkipped, onReadAgain, audit = false }: ReviewEndProps) {
  return (
    <div class="review-head review-end">
      {loadingFirst ? (
        <p aria-live="polite">Loading the images to review…</p>
      ) : (
        <>
          <h2 id="review-end" tabIndex={-1}>
            {endTitle(queue, of, audit)}
          </h2>
          <p class="muted">
            {queue.skipped.length > 0
              ? `You skipped ${plural(queue.skipped.length, 'image')}.`
              : audit
                ? 'Draw a sample, or more of it, under Accuracy; its images come here in random order.'
                : batch?.status === 'done'
                  ? 'A verdict can be changed on its image’s page; one withdrawn there brings its image back here.'
                  : 'Images still being classified join the queue once they are done.'}
          </p>
          <div class="buttons">
            {queue.skipped.length > 0 && (
              <button type="button" onClick={onReviewSkipped}>
                Review the {plural(queue.skipped.length, 'skipped image')}
              </button>
            )}
            {batch?.status !== 'done' && (
              <button type="button" class="secondary" onClick={onReadAgain}>
                Look for new images
              </button>
            )}
            <a class="button secondary" href={batchHref(batchId)}>
              Back to {batchId}
            </a>
          </div>
        </>
      )}
    </div>
  );
}

interface VerdictButtonsProps {
  /** The image to judge; none: only Undo is offered. */
  image: Image | undefined;
  shortcuts: boolean;
  nothingToUndo: boolean;
  onGive: (isCat: boolean) => void;
  onTakeBack: () => void;
  onPass: () => void;
}

/** Cat, not a cat, undo and skip, each with its key. */
export function VerdictButtons({ image, shortcuts, nothingToUndo, onGive, onTakeBack, onPass }: VerdictButtonsProps) {
  return (
    <div class="verdicts" role="group" aria-label="Verdict">
      {image && (
        <>
          <button type="button" class="verdict verdict-cat" aria-keyshortcuts={shortcuts ? 'y' : undefined} onClick={() => onGive(true)}>
            Cat <kbd aria-hidden="true">Y</kbd>
          </button>
          <button type="button" class="verdict verdict-not" aria-keyshortcuts={shortcuts ? 'n' : undefined} onClick={() => onGive(false)}>
            Not a cat <kbd aria-hidden="true">N</kbd>
          </button>
        </>
      )}
      <button
        type="button"
        class="secondary"
        aria-disabled={nothingToUndo ? 'true' : undefined}
        aria-keyshortcuts={shortcuts ? 'u' : undefined}
        onClick={onTakeBack}
      >
        Undo <kbd aria-hidden="true">U</kbd>
      </button>
      {image && (
        <button type="button" class="secondary" aria-keyshortcuts="ArrowRight" onClick={onPass}>
          Skip <kbd aria-hidden="true">→</kbd>
        </button>
      )}
    </div>
  );
}
