import type { Image } from '../../api';
import { capturedWhen, percent, place, when } from '../../format';
import { FileName } from '../common';

/** The image's labels, the most confident first, each with its confidence. */
export function LabelTable({ image }: { image: Image }) {
  return (
    <>
      <h2>Labels</h2>
      {image.labels.length === 0 ? (
        <p class="muted">No labels.</p>
      ) : (
        <table class="labels">
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Confidence</th>
            </tr>
          </thead>
          <tbody>
            {image.labels
              .slice()
              .sort((a, b) => b.confidence - a.confidence)
              .map((l) => (
                <tr key={l.name}>
                  <td>{l.name}</td>
                  <td>
                    <meter min={0} max={100} value={l.confidence} aria-label={`${l.name} confidence`} /> {percent(l.confidence)}
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** How many more uploads had these pixels, and under which names. */
export function DuplicateList({ image }: { image: Image }) {
  return (
    <>
      <h2>Duplicates</h2>
      {image.duplicates === 0 ? (
        <p class="muted">No other upload had these pixels.</p>
      ) : (
        <>
          <p>
            Uploaded {image.duplicates} more {image.duplicates === 1 ? 'time' : 'times'}
            {image.duplicateFiles?.length ? ' as:' : '.'}
          </p>
          {image.duplicateFiles && image.duplicateFiles.length > 0 && (
            <ul class="dup-files">
              {image.duplicateFiles.map((f) => (
                <li key={f}>
                  <FileName name={f} />
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </>
  );
}

/** The fingerprint, capture time, camera and place, and when the image was uploaded and classified. */
export function ImageDetails({ image }: { image: Image }) {
  return (
    <>
      <h2>Details</h2>
      <dl class="details">
        <dt>Fingerprint</dt>
        <dd>
          <code>{image.fprint}</code>
        </dd>
        {image.capturedAt && (
          <>
            <dt>Captured</dt>
            <dd>{capturedWhen(image.capturedAt)}</dd>
          </>
        )}
        {image.camera && (
          <>
            <dt>Camera</dt>
            <dd>{image.camera}</dd>
          </>
        )}
        {image.location && (
          <>
            <dt>Place</dt>
            <dd>{place(image.location)}</dd>
          </>
        )}
        <dt>Uploaded</dt>
        <dd>{when(image.uploadedAt)}</dd>
        <dt>Classified</dt>
        <dd>{when(image.classifiedAt)}</dd>
        {image.reused && (
          <>
            <dt>Labels</dt>
            <dd>reused from an earlier batch</dd>
          </>
        )}
      </dl>
    </>
  );
}
