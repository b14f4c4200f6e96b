import { useState } from 'preact/hooks';
import type { Image } from '../api';
import { describeImage } from '../format';

/**
 * A square box of fixed aspect whether or not the thumbnail has arrived, so nothing moves as images load. Without a
 * thumbnail (an image that could not be decoded, or one whose thumbnail could not be stored or has expired) a
 * placeholder names the file type.
 */
export function Thumb({ image, eager = false }: { image: Image; eager?: boolean }) {
  const alt = describeImage(image);
  const [missing, setMissing] = useState<string | null>(null);
  if (image.thumbnailUrl && missing !== image.thumbnailUrl) {
    const url = image.thumbnailUrl;
    return (
      <span class="thumb">
        <img src={url} alt={alt} width={256} height={256} loading={eager ? 'eager' : 'lazy'} decoding="async" onError={() => setMissing(url)} />
      </span>
    );
  }
  const ext = (image.fileName ?? '').split('.').pop()?.slice(0, 4).toUpperCase() || 'IMG';
  return (
    <span class="thumb placeholder" role="img" aria-label={alt}>
      <span aria-hidden="true">{image.status === 'fail' ? '!' : ext}</span>
    </span>
  );
}
