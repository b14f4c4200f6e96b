import type { Image } from '../api';
import { describeImage } from '../format';

/**
 * A square box of fixed aspect whether or not the thumbnail has arrived, so nothing moves as images load. Without a
 * thumbnail (an API that answers none, or an image that could not be decoded) a placeholder names the file type.
 */
export function Thumb({ image, eager = false }: { image: Image; eager?: boolean }) {
  const alt = describeImage(image);
  if (image.thumbnailUrl) {
    return (
      <span class="thumb">
        <img src={image.thumbnailUrl} alt={alt} width={256} height={256} loading={eager ? 'eager' : 'lazy'} decoding="async" />
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
