import type { Box, Image } from '../api';
import { boxRect, percent } from '../format';

/** The image's cats that have a box. */
export const boxedCats = (image: Image): { confidence: number; box: Box }[] =>
  (image.cats ?? []).filter((c): c is { confidence: number; box: Box } => !!c.box);

/**
 * The boxes as drawn in a space `width` × `height` (the image's pixels, or 0..100). Two tones, a dark stroke under a
 * light one: one of them stands out against any photo.
 */
export function BoxRects({ boxes, width = 100, height = 100 }: { boxes: { box: Box }[]; width?: number; height?: number }) {
  return (
    <>
      {boxes.map((c, i) => {
        const r = boxRect(c.box);
        const [x, y, w, h] = [(r.x * width) / 100, (r.y * height) / 100, (r.width * width) / 100, (r.height * height) / 100];
        return (
          <g key={i}>
            <rect class="cat-box-dark" x={x} y={y} width={w} height={h} vector-effect="non-scaling-stroke" />
            <rect class="cat-box" x={x} y={y} width={w} height={h} vector-effect="non-scaling-stroke" />
          </g>
        );
      })}
    </>
  );
}

/** The cat boxes over a picture (the frame it sits in sizes the overlay to the picture). */
export function CatBoxes({ boxes }: { boxes: { box: Box }[] }) {
  if (boxes.length === 0) return null;
  return (
    <svg class="boxes" viewBox="0 0 100 100" preserveAspectRatio="none" aria-hidden="true">
      <BoxRects boxes={boxes} />
    </svg>
  );
}

/** The boxes in words, for whoever does not see them. */
export function BoxList({ boxes }: { boxes: { confidence: number; box: Box }[] }) {
  if (boxes.length === 0) return null;
  return (
    <ul class="box-list">
      {boxes.map((c, i) => (
        <li key={i}>
          Cat {percent(c.confidence)} at {percent(c.box.left * 100)} from the left, {percent(c.box.top * 100)} from the top
        </li>
      ))}
    </ul>
  );
}
