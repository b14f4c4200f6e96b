import type { Agreement, BatchSummary } from '../../api';
import { plural } from '../../format';
import { ratioText, thresholdText } from '../../review';
import { ErrorNote } from '../common';

/** How often the detector agreed with the reviews, and its precision and recall, against the batch's threshold. */
function AgreementFigures({ agreement, now, suggested }: { agreement: Agreement; now: number | null; suggested: number | null }) {
  return (
    <>
      <p class="agree">
        The detector agreed with{' '}
        <strong>
          {agreement.agree} of {plural(agreement.reviewed, 'review')}
        </strong>{' '}
        ({ratioText(agreement.agree / agreement.reviewed)}).
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
    </>
  );
}

/** The suggested threshold applied in one click, or why it cannot be (already applied, the batch not done). */
function Rethreshold({
  batch,
  now,
  suggested,
  canReclassify,
  busy,
  onApply,
}: {
  batch: BatchSummary;
  now: number | null;
  suggested: number | null;
  canReclassify: boolean;
  busy: boolean;
  onApply: (threshold: number) => void;
}) {
  return (
    <>
      {suggested !== null && suggested !== now && canReclassify && (
        <div class="rethreshold">
          <button type="button" disabled={busy} aria-describedby="rethreshold-hint" onClick={() => onApply(suggested)}>
            {busy ? 'Applying…' : `Re-threshold at ${thresholdText(suggested)}`}
          </button>
          <p id="rethreshold-hint" class="hint">
            The threshold at which the detector would have agreed with the most reviews. Applying it re-reads the stored confidences
            (nothing is sent to Rekognition again); your verdicts stay.
          </p>
        </div>
      )}
      {suggested !== null && suggested === now && <p class="muted">The threshold already agrees best with the reviews.</p>}
      {suggested !== null && suggested !== now && !canReclassify && batch.status !== 'done' && (
        <p class="muted">The threshold can move once the batch is done.</p>
      )}
    </>
  );
}

/** Beside the image: the agreement of the detector with the reviews, and the threshold that would have agreed most. */
export function AgreementPanel({
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
        <p class="muted">
          No reviews yet. Once there are, this says how often the detector agreed with them, and which cat threshold would have agreed most.
        </p>
      ) : (
        <>
          <AgreementFigures agreement={agreement} now={now} suggested={suggested} />
          <Rethreshold batch={batch} now={now} suggested={suggested} canReclassify={canReclassify} busy={busy} onApply={onApply} />
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
