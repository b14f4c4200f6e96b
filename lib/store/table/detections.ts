// The detector's boxes of the labels other than Cat, and the model that drew them, kept on an image record as one
// compact string attribute (rek_dets): a MegaDetector export reads it for every image, and one string costs far less
// to read and unmarshal than nested maps (bench/export.bench.ts). Cat's boxes stay in rek_cats.
import type { Detections, NamedBox } from '../../domain/detection';

type Stored = { m: string; b: [string, number, number, number, number, number][] };

export function encodeDetections(d: Detections): string {
  const stored: Stored = { m: d.model, b: d.boxes.map((x) => [x.name, x.confidence, x.box.left, x.box.top, x.box.width, x.box.height]) };
  return JSON.stringify(stored);
}

/** The stored string back, or undefined when it is not one this code wrote. */
export function decodeDetections(text: unknown): Detections | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const s = JSON.parse(text) as Stored;
    if (typeof s.m !== 'string' || !Array.isArray(s.b)) return undefined;
    const boxes: NamedBox[] = s.b.map(([name, confidence, left, top, width, height]) => ({
      name,
      confidence,
      box: { left, top, width, height },
    }));
    return { model: s.m, boxes };
  } catch {
    return undefined;
  }
}
