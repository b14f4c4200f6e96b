// One image's verdicts (DESIGN §10): the detector's, and the person's, which wins. On the image's own page a person
// gives, changes or withdraws theirs; review mode is the quick way through a whole batch.
import { useRef, useState } from 'preact/hooks';
import { type Api, type Image, reviewPath } from '../api';
import { catConfidence, when } from '../format';
import { useCapabilities } from '../hooks';
import { machineSays } from '../review';
import { ErrorNote } from './common';

export function VerdictPanel({ api, image, onChange }: { api: Api; image: Image; onChange: (image: Image) => void }) {
  const caps = useCapabilities();
  const path = reviewPath(image.batchId, image.fprint);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [said, setSaid] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  if (!caps?.serves('PUT', path) || image.status !== 'success') return null;
  const review = image.review ?? null;

  const act = async (isCat: boolean | null) => {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      const answer = isCat === null ? await api.del<Image | undefined>(path) : await api.put<Image>(path, { isCat });
      // A DELETE may answer nothing: the image without its review, as the page knows it.
      onChange(answer ?? { ...image, review: null, isCat: image.machineIsCat ?? image.isCat });
      setSaid(isCat === null ? 'Verdict withdrawn: the detector’s stands.' : `Your verdict: ${isCat ? 'a cat' : 'not a cat'}.`);
      // Withdrawing removes its own button: focus to the section's heading rather than to nowhere.
      if (isCat === null) heading.current?.focus();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="verdict-panel" aria-labelledby="verdict-title">
      <h2 id="verdict-title" ref={heading} tabIndex={-1}>
        Verdict
      </h2>
      <p>
        The detector says {machineSays(image, catConfidence(image))}.{' '}
        {review ? (
          <>
            Yours: <strong>{review.isCat ? 'a cat' : 'not a cat'}</strong>
            {review.reviewedAt ? ` (${when(review.reviewedAt)})` : ''}, and it wins.
          </>
        ) : (
          'No person’s verdict yet.'
        )}
      </p>
      {review?.note && <p class="muted">Note: {review.note}</p>}
      <div class="buttons" role="group" aria-label="Your verdict">
        <button type="button" class="secondary" aria-pressed={review?.isCat === true} onClick={() => void act(true)}>
          Cat
        </button>
        <button type="button" class="secondary" aria-pressed={review?.isCat === false} onClick={() => void act(false)}>
          Not a cat
        </button>
        {review && (
          <button type="button" class="link" onClick={() => void act(null)}>
            Withdraw my verdict
          </button>
        )}
      </div>
      <ErrorNote error={error} />
      <p role="status" class="muted">
        {said}
      </p>
    </section>
  );
}
