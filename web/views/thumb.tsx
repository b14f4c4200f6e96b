import { useState } from 'preact/hooks';
import type { Image } from '../api';

/**
 * A square box of fixed aspect whether or not the thumbnail has arrived, so nothing moves as images load. Without a
 * thumbnail (an image that could not be decoded, or one whose thumbnail could not be stored or has expired) a
 * placeholder names the file type. Always inside a link whose text names the file and its labels, so it says nothing
 * itself (no name said twice).
 */
export function Thumb({ image, eager = false }: { image: Image; eager?: boolean }) {
  const [missing, setMissing] = useState<string | null>(null);
  if (image.thumbnailUrl && missing !== image.thumbnailUrl) {
    const url = image.thumbnailUrl;
    return (
      <span class="thumb">
        <img
          src={url}
          alt=""
          width={256}
          height={256}
          loading={eager ? 'eager' : 'lazy'}
          decoding="async"
          onError={() => setMissing(url)}
        />
      </span>
    );
  }
  const ext = (image.fileName ?? '').split('.').pop()?.slice(0, 4).toUpperCase() || 'IMG';
  return (
    <span class="thumb placeholder" aria-hidden="true">
      <span>{image.status === 'fail' ? '!' : ext}</span>
    </span>
  );
}
