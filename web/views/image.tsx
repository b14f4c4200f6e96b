import { useEffect, useState } from 'preact/hooks';
import { type Api, batchPath, type Image, isNotFound } from '../api';
import { catBadge, describePicture } from '../format';
import { href } from '../route';
import { batchHref } from './batch';
import { BoxList, boxedCats, CatBoxes } from './cat-boxes';
import { ErrorNote, FileName, StatusChip } from './common';
import { DuplicateList, ImageDetails, LabelTable } from './image/facts';
import { VerdictPanel } from './verdict';

/**
 * The image fills the frame's width; until it has loaded, its thumbnail (of the same proportions, and usually in the
 * browser's cache from the grid) holds its place, so nothing below moves when it arrives.
 */
function Picture({ image }: { image: Image }) {
  const boxes = boxedCats(image);
  const src = image.imageUrl ?? image.thumbnailUrl;
  const [loaded, setLoaded] = useState<string | null>(null);
  const preview = src !== image.thumbnailUrl && loaded !== src ? image.thumbnailUrl : null;
  return (
    <figure class="picture">
      <div class={`frame${src ? ' fill' : ''}`}>
        {preview && <img class="preview" src={preview} alt="" aria-hidden="true" />}
        {src ? (
          <img class={preview ? 'arriving' : undefined} src={src} alt={describePicture(image)} onLoad={() => setLoaded(src)} />
        ) : (
          <span class="thumb placeholder big" role="img" aria-label={describePicture(image)}>
            <span aria-hidden="true">{(image.fileName ?? '').split('.').pop()?.toUpperCase() || 'IMG'}</span>
          </span>
        )}
        <CatBoxes boxes={boxes} />
      </div>
      {boxes.length > 0 && (
        <figcaption>
          <BoxList boxes={boxes} />
        </figcaption>
      )}
    </figure>
  );
}

/** The image, read once per batch and fingerprint; `setImage` takes the image a verdict answered with. */
function useImage(api: Api, batchId: string, fprint: string) {
  const [image, setImage] = useState<Image | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    api.get<Image>(`${batchPath(batchId)}/images/${encodeURIComponent(fprint)}`).then(
      (got) => live && setImage(got),
      (err) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [api, batchId, fprint]);
  return { image, setImage, error };
}

/** Escape leads back to the batch, to the view it was left in. */
function useEscapeToBatch(batchId: string): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') location.hash = batchHref(batchId);
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [batchId]);
}

export function ImageView({ api, batchId, fprint }: { api: Api; batchId: string; fprint: string }) {
  const { image, setImage, error } = useImage(api, batchId, fprint);
  useEscapeToBatch(batchId);

  return (
    <section aria-labelledby="image-title">
      <p class="crumbs">
        <a href={href.batches()}>Batches</a> / <a href={batchHref(batchId)}>{batchId}</a> /
      </p>
      {error ? <ErrorNote error={isNotFound(error) ? new Error('No such image in this batch.') : error} /> : null}
      {!image && !error && <p aria-live="polite">Loading…</p>}
      {image && (
        <>
          <div class="title-row">
            <h1 id="image-title">
              <FileName name={image.fileName ?? image.fprint} />
            </h1>
            <StatusChip status={image.status} />
            {image.isCat && <span class="badge badge-cat static">{catBadge(image)}</span>}
          </div>
          <div class="image-layout">
            <Picture image={image} />
            <div class="facts">
              {image.error && (
                <div class="card-error" role="note">
                  <h2>Error</h2>
                  <p>
                    <code>{image.error.code}</code>: {image.error.message}
                  </p>
                </div>
              )}
              <VerdictPanel api={api} image={image} onChange={setImage} />
              <LabelTable image={image} />
              <DuplicateList image={image} />
              <ImageDetails image={image} />
            </div>
          </div>
        </>
      )}
    </section>
  );
}
