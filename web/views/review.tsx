// Review mode (DESIGN §10): a batch's unreviewed images one at a time, those the detector was least sure of first, each
// large with its cat boxes; the reader says cat (y), not a cat (n), takes the last verdict back (u) or skips (→), by key
// or by button. Beside it, how often the detector agreed with the reviews and the threshold that would have agreed
// most, applied in one click. Verdicts show at once and go to the API one after the other, in the order given.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { batchPath, isNotFound, reviewPath, type Agreement, type Api, type BatchSummary, type Image, type Page } from '../api';
import { catConfidence, describePicture, plural } from '../format';
import { useCapabilities } from '../hooks';
import {
  again,
  current,
  emptyQueue,
  judge,
  machineSays,
  progress,
  ratioText,
  refused,
  replaced,
  restart,
  restored,
  skip,
  thresholdText,
  undo,
  wantsMore,
  withPage,
  type ReviewQueue,
} from '../review';
import { href } from '../route';
import { batchHref } from './batch';
import { reclassifyAll } from './batch-actions';
import { BoxList, boxedCats, BoxRects } from './cat-boxes';
import { ErrorNote, FileName } from './common';

const PAGE = 25;
const SHORTCUTS = 'icecat.reviewShortcuts';

const imagePath = (batchId: string, fprint: string) => batchPath(batchId, `/images/${encodeURIComponent(fprint)}`);
const nameOf = (image: Image) => image.fileName ?? image.fprint;

/** Single-key shortcuts can be turned off (WCAG 2.1.4): a speech user's words must not judge images. */
const shortcutsOn = (): boolean => {
  try {
    return localStorage.getItem(SHORTCUTS) !== 'off';
  } catch {
    return true;
  }
};

/**
 * One image as large as the screen allows, whole: the picture and its boxes in one SVG in the image's own pixels, so
 * the boxes stay on the cat at any size (a small photo is drawn larger). Shown once its size is known, never with
 * another image's boxes. A picture whose presigned URL has expired asks for the image again (`onStale`).
 */
function ReviewPicture({ image, onStale }: { image: Image; onStale: (image: Image) => void }) {
  const boxes = boxedCats(image);
  const src = image.imageUrl ?? image.thumbnailUrl;
  const [size, setSize] = useState<{ src: string; width: number; height: number } | null>(null);
  const stale = useRef(onStale);
  stale.current = onStale;
  useEffect(() => {
    if (!src) return undefined;
    let live = true;
    const probe = new Image();
    probe.onload = () => live && setSize({ src, width: probe.naturalWidth, height: probe.naturalHeight });
    probe.onerror = () => live && stale.current(image);
    probe.src = src;
    return () => {
      live = false;
    };
  }, [src]);
  const shown = size && size.src === src ? size : null;
  return (
    <figure class="picture review-picture">
      {!src ? (
        <span class="thumb placeholder big" role="img" aria-label={describePicture(image)}>
          <span aria-hidden="true">{(image.fileName ?? '').split('.').pop()?.toUpperCase() || 'IMG'}</span>
        </span>
      ) : shown ? (
        <svg class="review-frame" viewBox={`0 0 ${shown.width} ${shown.height}`} role="img" aria-label={describePicture(image)}>
          <image href={shown.src} width={shown.width} height={shown.height} />
          <g class="review-boxes">
            <BoxRects boxes={boxes} width={shown.width} height={shown.height} />
          </g>
        </svg>
      ) : (
        <div class="review-frame waiting">
          <span class="muted">Loading the picture…</span>
        </div>
      )}
      <figcaption>{boxes.length > 0 ? <BoxList boxes={boxes} /> : <p class="muted box-none">No cat box drawn.</p>}</figcaption>
    </figure>
  );
}

function AgreementPanel({
  agreement,
  batch,
  canReclassify,
  busy,
  outcome,
  error,
  onApply,
}: {
  agreement: Agreement | null;
  batch: BatchSummary;
  canReclassify: boolean;
  busy: boolean;
  outcome: string | null;
  error: unknown;
  onApply: (threshold: number) => void;
}) {
  const now = batch.catMinConfidence ?? null;
  const suggested = agreement?.suggestedCatMinConfidence ?? null;
  return (
    <section class="agreement" aria-labelledby="agreement-title">
      <h2 id="agreement-title" tabIndex={-1}>
        Agreement
      </h2>
      {!agreement ? (
        <p class="muted">Reading…</p>
      ) : agreement.reviewed === 0 ? (
        <p class="muted">No reviews yet. Once there are, this says how often the detector agreed with them, and which cat threshold would have agreed most.</p>
      ) : (
        <>
          <p class="agree">
            The detector agreed with <strong>{agreement.agree} of {plural(agreement.reviewed, 'review')}</strong> ({ratioText(agreement.agree / agreement.reviewed)}).
          </p>
          <dl class="details">
            <dt>Precision</dt>
            <dd>
              {ratioText(agreement.precision)} <span class="hint">of the images it called cats are cats</span>
            </dd>
            <dt>Recall</dt>
            <dd>
              {ratioText(agreement.recall)} <span class="hint">of the cats it called cats</span>
            </dd>
            <dt>Threshold</dt>
            <dd>{now === null ? 'the deployment’s default' : thresholdText(now)}</dd>
            <dt>Suggested</dt>
            <dd>{suggested === null ? '—' : thresholdText(suggested)}</dd>
          </dl>
          {suggested !== null && suggested !== now && canReclassify && (
            <div class="rethreshold">
              <button type="button" disabled={busy} aria-describedby="rethreshold-hint" onClick={() => onApply(suggested)}>
                {busy ? 'Applying…' : `Re-threshold at ${thresholdText(suggested)}`}
              </button>
              <p id="rethreshold-hint" class="hint">
                The threshold at which the detector would have agreed with the most reviews. Applying it re-reads the stored confidences (nothing is
                sent to Rekognition again); your verdicts stay.
              </p>
            </div>
          )}
          {suggested !== null && suggested === now && <p class="muted">The threshold already agrees best with the reviews.</p>}
          {suggested !== null && suggested !== now && !canReclassify && batch.status !== 'done' && (
            <p class="muted">The threshold can move once the batch is done.</p>
          )}
        </>
      )}
      <ErrorNote error={error} />
      {outcome && (
        <p role="status" class="muted">
          {outcome}
        </p>
      )}
    </section>
  );
}

export function ReviewView({ api, batchId }: { api: Api; batchId: string }) {
  const caps = useCapabilities();
  const path = batchPath(batchId);
  const servesAgreement = caps?.serves('GET', `${path}/agreement`) ?? false;
  const canReclassify = caps?.serves('POST', `${path}:reclassify`) ?? false;

  const [batch, setBatch] = useState<BatchSummary | null>(null);
  const [agreement, setAgreement] = useState<Agreement | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [verdictError, setVerdictError] = useState<unknown>(null);
  const [said, setSaid] = useState('');
  const [unsynced, setUnsynced] = useState(0);
  /** Verdicts sent and not yet in the counts read back: the progress says so (aria-busy). */
  const [saving, setSaving] = useState(false);
  const [shortcuts, setShortcuts] = useState(shortcutsOn);
  const [rethreshold, setRethreshold] = useState<{ busy: boolean; outcome: string | null; error: unknown }>({ busy: false, outcome: null, error: null });

  // The queue in a ref (the key handler and the API's answers read the latest) mirrored into state (for rendering).
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

  // Verdicts and undos go to the API one after the other; once none is on its way, the counts and agreement are read.
  const chain = useRef<Promise<void>>(Promise.resolve());
  const inFlight = useRef(0);
  const sent = useRef(0);
  const refocus = useRef(false);
  const restale = useRef(new Set<string>());

  const sync = useCallback(async () => {
    const at = sent.current;
    try {
      const [summary, agreed] = await Promise.all([
        api.get<BatchSummary>(path),
        servesAgreement ? api.get<Agreement>(`${path}/agreement`) : Promise.resolve(null),
      ]);
      // Another verdict left meanwhile: these counts may miss it; its own sync follows.
      if (at !== sent.current) return;
      setBatch(summary);
      setAgreement(agreed);
      setUnsynced(0);
      setSaving(false);
    } catch (error) {
      if (at === sent.current) setLoadError(error);
    }
  }, [api, path, servesAgreement]);

  const send = (delta: number, op: () => Promise<void>) => {
    sent.current++;
    inFlight.current++;
    setUnsynced((u) => u + delta);
    setSaving(true);
    chain.current = chain.current
      .then(op)
      .finally(() => {
        if (--inFlight.current === 0) void sync();
      });
  };

  // The summary and the agreement, once capabilities are known.
  useEffect(() => {
    if (!caps) return;
    void sync();
  }, [caps, sync]);

  const loadMore = useCallback(async () => {
    const r = reading.current;
    if (r.loading || !wantsMore(queueRef.current)) return;
    r.loading = true;
    const run = r.run;
    try {
      const page = await api.get<Page<Image>>(`${path}/images`, { review: 'pending', order: 'uncertain', limit: PAGE, cursor: queueRef.current.cursor });
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
  }, [api, path]);

  // Whenever the queue runs low: its next page.
  useEffect(() => {
    if (!loadError) void loadMore();
  }, [queue, readingRun, loadMore, loadError]);

  // The next two pictures, fetched before they are shown.
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

  // A verdict that emptied the queue took its buttons with it: focus goes to what is there now, never to nowhere. A
  // layout effect, run as the DOM changes: a plain one could run late, after the next move had set the flag again.
  useLayoutEffect(() => {
    if (!refocus.current) return;
    refocus.current = false;
    const active = document.activeElement;
    if (active && active !== document.body && active.isConnected) return;
    document.querySelector<HTMLElement>('#review-current, #review-end')?.focus();
  });

  const counts = batch?.counts ?? { total: 0, success: 0, fail: 0, duplicate: 0, cats: 0 };
  const { reviewed, of } = progress(counts, unsynced);
  const image = current(queue);

  /** The announcement after a move: what was done, and what is shown now. */
  const tell = (done: string, next: ReviewQueue, reviewedNow: number) => {
    const upcoming = current(next);
    const what = upcoming
      ? ` Now: ${nameOf(upcoming)}, the detector says ${machineSays(upcoming, catConfidence(upcoming))}.`
      : !next.ended
        ? ''
        : next.skipped.length === 1
          ? ' Only the skipped image is left.'
          : next.skipped.length > 1
            ? ` Only the ${next.skipped.length} skipped images are left.`
            : ' Nothing left to review.';
    setSaid(`${done} ${reviewedNow} of ${of} reviewed.${what}`);
  };

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

  const readAgain = () => {
    reading.current = { run: reading.current.run + 1, loading: false };
    setQueue(restart(queueRef.current));
    setLoadError(null);
    setReadingRun(reading.current.run);
  };

  const stale = (old: Image) => {
    if (restale.current.has(old.fprint)) return;
    restale.current.add(old.fprint);
    api.get<Image>(imagePath(batchId, old.fprint)).then(
      (fresh) => setQueue(replaced(queueRef.current, fresh)),
      () => undefined,
    );
  };

  const applyThreshold = async (threshold: number) => {
    setRethreshold({ busy: true, outcome: null, error: null });
    try {
      // After the verdicts on their way: the agreement read next counts them.
      await chain.current;
      const summary = await reclassifyAll(api, batchId, threshold);
      setBatch(summary);
      setRethreshold({ busy: false, outcome: `Cat threshold ${thresholdText(threshold)}: ${plural(summary.counts.cats, 'cat')}.`, error: null });
      // The button is gone (the threshold is the suggested one now): focus to the panel's heading, the outcome is read out.
      document.getElementById('agreement-title')?.focus();
      readAgain();
      void sync();
    } catch (error) {
      setRethreshold({ busy: false, outcome: null, error });
    }
  };

  // The keys: y, n, u, → and Escape; not while typing, not with a modifier, not when held down.
  const keys = useRef({ give, takeBack, pass, shortcuts });
  keys.current = { give, takeBack, pass, shortcuts };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
      const target = e.target as HTMLElement | null;
      if (target?.closest('input:not([type="checkbox"]), textarea, select, [contenteditable], dialog')) return;
      if (e.key === 'Escape') {
        location.hash = batchHref(batchId);
        return;
      }
      const k = keys.current;
      const action =
        e.key === 'ArrowRight'
          ? k.pass
          : !k.shortcuts
            ? undefined
            : { y: () => k.give(true), n: () => k.give(false), u: k.takeBack }[e.key.toLowerCase()];
      if (!action) return;
      e.preventDefault();
      if (!e.repeat) action();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [batchId]);

  const toggleShortcuts = (on: boolean) => {
    setShortcuts(on);
    try {
      localStorage.setItem(SHORTCUTS, on ? 'on' : 'off');
    } catch {
      // Private mode: the choice lasts for this page only.
    }
  };

  // No such batch, or it was erased while being reviewed (a verdict refused, then its counts): the page says so.
  if (loadError && isNotFound(loadError)) {
    return (
      <section>
        <h1>Review {batchId}</h1>
        <ErrorNote error={new Error(`No batch named ${batchId} for this key${batch ? ' any more: it was erased' : ''}.`)} />
        <a href={href.batches()}>All batches</a>
      </section>
    );
  }

  const nothingToUndo = queue.given.length === 0;
  return (
    <section class="review" aria-labelledby="review-title">
      <p class="crumbs">
        <a href={href.batches()}>Batches</a> / <a href={batchHref(batchId)}>{batchId}</a> /
      </p>
      <div class="title-row">
        <h1 id="review-title">Review {batchId}</h1>
      </div>
      <div class="progress review-progress" aria-busy={saving}>
        <progress max={Math.max(of, 1)} value={reviewed} aria-label={`${reviewed} of ${of} reviewed`} />
        <span class="progress-text">
          {reviewed} of {of} reviewed
        </span>
      </div>
      <ErrorNote error={loadError} />
      <div class="review-layout">
        {image ? (
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
            <ReviewPicture key={image.fprint} image={image} onStale={stale} />
          </>
        ) : (
          <div class="review-head review-end">
            {loadingFirst ? (
              <p aria-live="polite">Loading the images to review…</p>
            ) : (
              <>
                <h2 id="review-end" tabIndex={-1}>
                  {queue.skipped.length > 0 ? 'Only skipped images left' : of === 0 ? 'Nothing to review yet' : 'Every image is reviewed'}
                </h2>
                <p class="muted">
                  {queue.skipped.length > 0
                    ? `You skipped ${plural(queue.skipped.length, 'image')}.`
                    : batch?.status === 'done'
                      ? 'A verdict can be changed on its image’s page; one withdrawn there brings its image back here.'
                      : 'Images still being classified join the queue once they are done.'}
                </p>
                <div class="buttons">
                  {queue.skipped.length > 0 && (
                    <button
                      type="button"
                      onClick={() => {
                        refocus.current = true;
                        setQueue(again(queueRef.current));
                      }}
                    >
                      Review the {plural(queue.skipped.length, 'skipped image')}
                    </button>
                  )}
                  {batch?.status !== 'done' && (
                    <button type="button" class="secondary" onClick={readAgain}>
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
        )}
        <div class="verdicts" role="group" aria-label="Verdict">
          {image && (
            <>
              <button type="button" class="verdict verdict-cat" aria-keyshortcuts={shortcuts ? 'y' : undefined} onClick={() => give(true)}>
                Cat <kbd aria-hidden="true">Y</kbd>
              </button>
              <button type="button" class="verdict verdict-not" aria-keyshortcuts={shortcuts ? 'n' : undefined} onClick={() => give(false)}>
                Not a cat <kbd aria-hidden="true">N</kbd>
              </button>
            </>
          )}
          <button type="button" class="secondary" aria-disabled={nothingToUndo ? 'true' : undefined} aria-keyshortcuts={shortcuts ? 'u' : undefined} onClick={takeBack}>
            Undo <kbd aria-hidden="true">U</kbd>
          </button>
          {image && (
            <button type="button" class="secondary" aria-keyshortcuts="ArrowRight" onClick={pass}>
              Skip <kbd aria-hidden="true">→</kbd>
            </button>
          )}
        </div>
        <div class="review-said">
          <ErrorNote error={verdictError} />
          <p role="status" class="muted">
            {said}
          </p>
        </div>
        <div class="review-side">
          {batch && servesAgreement && (
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
          <section class="review-keys" aria-labelledby="keys-title">
            <h2 id="keys-title">Keys</h2>
            <dl class="details">
              <dt>
                <kbd>Y</kbd>
              </dt>
              <dd>a cat</dd>
              <dt>
                <kbd>N</kbd>
              </dt>
              <dd>not a cat</dd>
              <dt>
                <kbd>U</kbd>
              </dt>
              <dd>undo the last verdict</dd>
              <dt>
                <kbd>→</kbd>
              </dt>
              <dd>skip, for now</dd>
              <dt>
                <kbd>Esc</kbd>
              </dt>
              <dd>back to the batch</dd>
            </dl>
            <label class="check">
              <input type="checkbox" checked={shortcuts} onChange={(e) => toggleShortcuts((e.target as HTMLInputElement).checked)} />
              Single-letter keys (Y, N, U)
            </label>
          </section>
        </div>
      </div>
    </section>
  );
}
