import type { Box, Image } from '../api';
import { boxRect, percent } from '../format';

/** The image's cats that have a box. */
export const boxedCats = (image: Image): { confidence: number; box: Box }[] =>
  (image.cats ?? []).filter((c): c is { confidence: number; box: Box } => !!c.box);

/**
 * The cat boxes over a picture (the frame it sits in sizes the overlay to the picture). Two tones, a dark stroke under
 * a light one: one of them stands out against any photo.
 */
export function CatBoxes({ boxes }: { boxes: { box: Box }[] }) {
  if (boxes.length === 0) return null;
  return (
    <svg class="boxes" viewBox="0 0 100 100" preserveAspectRatio="none" aria-hidden="true">
      {boxes.map((c, i) => {
        const r = boxRect(c.box);
        return (
          <g key={i}>
            <rect class="cat-box-dark" x={r.x} y={r.y} width={r.width} height={r.height} vector-effect="non-scaling-stroke" />
            <rect class="cat-box" x={r.x} y={r.y} width={r.width} height={r.height} vector-effect="non-scaling-stroke" />
          </g>
        );
      })}
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
