// The audit queue's parts (DESIGN §13): the choice of queue (uncertain first, or the audit sample at random), the
// draw of a sample, and the accuracy estimated from the sample's reviews with 95 % intervals.
import { useState } from 'preact/hooks';
import { countText, drawSize, shareText } from '../../accuracy';
import type { Accuracy, Api, AuditResult } from '../../api';
import { plural } from '../../format';
import type { ReviewSource } from '../../review';
import { ErrorNote } from '../common';

const CHOICES: { value: ReviewSource; label: string; hint: string }[] = [
  { value: 'uncertain', label: 'Uncertain first', hint: 'the images the detector was least sure of: for correcting' },
  { value: 'audit', label: 'Audit', hint: 'a random sample: for measuring how often the detector is right' },
];

/** Which queue to go through: native radios, so arrow keys move the choice and a screen reader names the group. */
export function QueueChoice({ source, onChoose }: { source: ReviewSource; onChoose: (source: ReviewSource) => void }) {
  return (
    <fieldset class="queue-choice">
      <legend>Queue</legend>
      {CHOICES.map((c) => (
        <label key={c.value}>
          <input type="radio" name="review-queue" value={c.value} checked={source === c.value} onChange={() => onChoose(c.value)} />{' '}
          {c.label} <span class="hint">({c.hint})</span>
        </label>
      ))}
    </fieldset>
  );
}

/** POST …/audit: a sample drawn (or more of it); then the queue is read from its start and the estimates again. */
export function useAuditDraw(api: Api, path: string, readFresh: () => void, sync: () => Promise<void>) {
  const [draw, setDraw] = useState<{ busy: boolean; outcome: string | null; error: unknown }>({ busy: false, outcome: null, error: null });
  const drawSample = async (size: number) => {
    setDraw({ busy: true, outcome: null, error: null });
    try {
      const drawn = await api.post<AuditResult>(`${path}/audit`, { size });
      const outcome =
        drawn.drawn === 0
          ? 'Every image is in the sample already: nothing more to draw.'
          : `Drew ${plural(drawn.drawn, 'image')}: ${drawn.sampled} in the sample.`;
      setDraw({ busy: false, outcome, error: null });
      readFresh();
      void sync();
    } catch (error) {
      setDraw({ busy: false, outcome: null, error });
    }
  };
  return { draw, drawSample };
}

/** How many images to draw (1–500), checked before it is sent. */
function DrawForm({ first, busy, onDraw }: { first: boolean; busy: boolean; onDraw: (size: number) => void }) {
  const [text, setText] = useState('50');
  const [invalid, setInvalid] = useState<string | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    const parsed = drawSize(text);
    if ('error' in parsed) return setInvalid(parsed.error);
    setInvalid(null);
    onDraw(parsed.size);
  };
  return (
    <form class="audit-draw" onSubmit={submit} noValidate>
      <label for="audit-size">{first ? 'Images to draw at random' : 'More images to draw'}</label>
      <div class="inline-field">
        <input
          id="audit-size"
          type="number"
          inputMode="numeric"
          min={1}
          max={500}
          value={text}
          aria-invalid={invalid ? 'true' : undefined}
          aria-describedby={invalid ? 'audit-size-error audit-size-hint' : 'audit-size-hint'}
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Drawing…' : first ? 'Draw a sample' : 'Draw more'}
        </button>
      </div>
      <p id="audit-size-hint" class="hint">
        1 to 500; never an image twice.
      </p>
      {invalid && (
        <p id="audit-size-error" class="error" role="alert">
          {invalid}
        </p>
      )}
    </form>
  );
}

/** The four estimates, each with its 95 % interval, or why there is none yet. */
function Estimates({ accuracy }: { accuracy: Accuracy }) {
  return (
    <dl class="details">
      <dt>Precision</dt>
      <dd>
        {shareText(accuracy.precision)} <span class="hint">of the images it called cats are cats</span>
      </dd>
      <dt>Recall</dt>
      <dd>
        {shareText(accuracy.recall)} <span class="hint">of the cats it called cats</span>
      </dd>
      <dt>Accuracy</dt>
      <dd>
        {shareText(accuracy.accuracy)} <span class="hint">of the batch it has right</span>
      </dd>
      <dt>Cats</dt>
      <dd>
        {countText(accuracy.cats)} <span class="hint">in the batch, truly</span>
      </dd>
    </dl>
  );
}

interface AccuracyPanelProps {
  accuracy: Accuracy | null;
  /** The last draw: on its way, what it drew, or why it was refused. */
  draw: { busy: boolean; outcome: string | null; error: unknown };
  onDraw: (size: number) => void;
}

/** Beside the audit queue: the sample's size, its reviews and the estimates, and the form to draw (more of) it. */
export function AccuracyPanel({ accuracy, draw, onDraw }: AccuracyPanelProps) {
  const { busy, outcome, error } = draw;
  return (
    <section class="agreement accuracy" aria-labelledby="accuracy-title">
      <h2 id="accuracy-title" tabIndex={-1}>
        Accuracy
      </h2>
      {!accuracy ? (
        <p class="muted">Reading…</p>
      ) : (
        <>
          <p class="audit-counts">
            {accuracy.sampled === 0
              ? 'No sample drawn yet. Reviews of a random sample estimate how often the detector is right on this batch.'
              : `${accuracy.reviewed} of ${plural(accuracy.sampled, 'sampled image')} reviewed.`}
          </p>
          {accuracy.sampled > 0 && <Estimates accuracy={accuracy} />}
          {accuracy.sampled > 0 && <p class="hint">Estimates from the sample’s reviews only, with their 95% intervals.</p>}
          <DrawForm first={accuracy.sampled === 0} busy={busy} onDraw={onDraw} />
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
