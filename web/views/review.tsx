// Review mode (DESIGN §10): a batch's unreviewed images one at a time, those the detector was least sure of first, each
// large with its cat boxes; the reader says cat (y), not a cat (n), takes the last verdict back (u) or skips (→), by key
// or by button. Beside it, how often the detector agreed with the reviews and the threshold that would have agreed
// most, applied in one click. Verdicts show at once and go to the API one after the other, in the order given.
// Its parts are in review/: the counts and the verdicts on their way, the queue, the moves, the keys, the card.

import { useState } from 'preact/hooks';
import { type Api, batchPath, isNotFound } from '../api';
import { useCapabilities } from '../hooks';
import { current, progress, type ReviewSource } from '../review';
import { href } from '../route';
import { batchHref } from './batch';
import { ErrorNote } from './common';
import { AgreementPanel } from './review/agreement-panel';
import { AccuracyPanel, QueueChoice, useAuditDraw } from './review/audit-panel';
import { ReviewCurrent, ReviewEnd, ReviewProgress, VerdictButtons } from './review/card';
import { useReviewSync } from './review/counts-sync';
import { KeysPanel, useReviewKeys, useShortcutsSetting } from './review/keys';
import { useReviewMoves } from './review/moves';
import { useReviewQueue } from './review/queue-state';
import { useRethreshold } from './review/rethreshold';

/** The batch is not there: never was for this key, or was erased while being reviewed. */
function ReviewNotFound({ batchId, erased }: { batchId: string; erased: boolean }) {
  return (
    <section>
      <h1>Review {batchId}</h1>
      <ErrorNote error={new Error(`No batch named ${batchId} for this key${erased ? ' any more: it was erased' : ''}.`)} />
      <a href={href.batches()}>All batches</a>
    </section>
  );
}

/** Where the page sits (batches / the batch) and its title. */
function ReviewHeading({ batchId }: { batchId: string }) {
  return (
    <>
      <p class="crumbs">
        <a href={href.batches()}>Batches</a> / <a href={batchHref(batchId)}>{batchId}</a> /
      </p>
      <div class="title-row">
        <h1 id="review-title">Review {batchId}</h1>
      </div>
    </>
  );
}

/** What the last verdict did, or why it was refused, read out politely. */
function ReviewSaid({ error, said }: { error: unknown; said: string }) {
  return (
    <div class="review-said">
      <ErrorNote error={error} />
      <p role="status" class="muted">
        {said}
      </p>
    </div>
  );
}

/** What the API serves the review of this batch: the agreement, :reclassify, the audit. */
function useReviewRoutes(path: string) {
  const caps = useCapabilities();
  return {
    caps,
    servesAgreement: caps?.serves('GET', `${path}/agreement`) ?? false,
    canReclassify: caps?.serves('POST', `${path}:reclassify`) ?? false,
    servesAudit: caps?.serves('GET', `${path}/accuracy`) ?? false,
  };
}

export function ReviewView({ api, batchId }: { api: Api; batchId: string }) {
  const path = batchPath(batchId);
  const { caps, servesAgreement, canReclassify, servesAudit } = useReviewRoutes(path);
  const [source, setSource] = useState<ReviewSource>('uncertain');
  const [shortcuts, toggleShortcuts] = useShortcutsSetting();
  const synced = useReviewSync(api, path, servesAgreement, caps, source === 'audit');
  const { batch, agreement, loadError } = synced;
  const queueState = useReviewQueue(api, path, batchId, loadError, synced.setLoadError, source);
  const { queue, readAgain } = queueState;
  const { draw, drawSample } = useAuditDraw(api, path, queueState.readFresh, synced.sync);
  const counts = batch?.counts ?? { total: 0, success: 0, fail: 0, duplicate: 0, cats: 0 };
  const { reviewed, of } = progress(counts, synced.unsynced);
  const image = current(queue);
  const moves = useReviewMoves({ api, batchId, queue: queueState, send: synced.send, reviewed, of });
  const { rethreshold, applyThreshold } = useRethreshold({
    api,
    batchId,
    chain: synced.chain,
    setBatch: synced.setBatch,
    readAgain,
    sync: synced.sync,
  });
  useReviewKeys(batchId, { give: moves.give, takeBack: moves.takeBack, pass: moves.pass, shortcuts });

  // No such batch, or it was erased while being reviewed (a verdict refused, then its counts): the page says so.
  if (loadError && isNotFound(loadError)) {
    return <ReviewNotFound batchId={batchId} erased={batch !== null} />;
  }

  return (
    <section class="review" aria-labelledby="review-title">
      <ReviewHeading batchId={batchId} />
      <ReviewProgress reviewed={reviewed} of={of} saving={synced.saving} />
      {servesAudit && <QueueChoice source={source} onChoose={setSource} />}
      <ErrorNote error={loadError} />
      <div class="review-layout">
        {image ? (
          <ReviewCurrent image={image} batch={batch} queue={queue} onStale={queueState.stale} />
        ) : (
          <ReviewEnd
            batchId={batchId}
            batch={batch}
            queue={queue}
            of={of}
            loadingFirst={queueState.loadingFirst}
            onReviewSkipped={moves.reviewSkipped}
            onReadAgain={readAgain}
            audit={source === 'audit'}
          />
        )}
        <VerdictButtons
          image={image}
          shortcuts={shortcuts}
          nothingToUndo={queue.given.length === 0}
          onGive={moves.give}
          onTakeBack={moves.takeBack}
          onPass={moves.pass}
        />
        <ReviewSaid error={moves.verdictError} said={moves.said} />
        <div class="review-side">
          {source === 'audit' && <AccuracyPanel accuracy={synced.accuracy} draw={draw} onDraw={(size) => void drawSample(size)} />}
          {batch && servesAgreement && source === 'uncertain' && (
            <AgreementPanel
              agreement={agreement}
              batch={batch}
              canReclassify={canReclassify && batch.status === 'done'}
              busy={rethreshold.busy}
              outcome={rethreshold.outcome}
              error={rethreshold.error}
              onApply={(t) => void applyThreshold(t)}
            />
          )}
          <KeysPanel shortcuts={shortcuts} onToggle={toggleShortcuts} />
        </div>
      </div>
    </section>
  );
}
