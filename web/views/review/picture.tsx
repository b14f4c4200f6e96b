import { useEffect, useRef, useState } from 'preact/hooks';
import type { Image } from '../../api';
import { describePicture } from '../../format';
import { BoxList, BoxRects, boxedCats } from '../cat-boxes';

/**
 * One image as large as the screen allows, whole: the picture and its boxes in one SVG in the image's own pixels, so
 * the boxes stay on the cat at any size (a small photo is drawn larger). Shown once its size is known, never with
 * another image's boxes. A picture whose presigned URL has expired asks for the image again (`onStale`).
 */
export function ReviewPicture({ image, onStale }: { image: Image; onStale: (image: Image) => void }) {
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
