// The local detector's confidence scale: model scores (0..1) mapped onto Rekognition's 0..100.

import { LOCAL_CAT_MIN_CONFIDENCE, LOCAL_REKOGNITION_MIN_CONFIDENCE } from '../../local/contract';
import { type FoundObject, toLabels } from '../../local/detector/labels';
import { COCO_CLASSES } from '../../local/detector/taxonomy';
import { SCALE_KNOTS, scoreToConfidence } from '../../local/detector/thresholds';

const CAT = COCO_CLASSES.indexOf('cat');
const box = { Left: 0.1, Top: 0.2, Width: 0.5, Height: 0.6 };
const detection = (score: number): FoundObject => ({ classIndex: CAT, score, box });

describe('scoreToConfidence', () => {
  test('maps a score of 0 to 0 and of 1 to 100', () => {
    expect([scoreToConfidence(0), scoreToConfidence(1)]).toEqual([0, 100]);
  });

  test('is strictly increasing over the whole range', () => {
    // Arrange
    const scores = Array.from({ length: 10_001 }, (_, i) => i / 10_000);

    // Act
    const confidences = scores.map(scoreToConfidence);

    // Assert
    const notRising = confidences.flatMap((c, i) => (i > 0 && c <= confidences[i - 1]! ? [scores[i]] : []));
    expect(notRising).toEqual([]);
  });

  test('passes through each knot', () => {
    expect(SCALE_KNOTS.map((k) => scoreToConfidence(k.score))).toEqual(SCALE_KNOTS.map((k) => k.confidence));
  });

  test('is linear between knots', () => {
    // Act
    const between = [0.075, 0.175, 0.35, 0.75].map(scoreToConfidence);

    // Assert
    expect(between.map((c) => Math.round(c * 1e9) / 1e9)).toEqual([10, 50, 88.5, 98.5]);
  });

  test('clamps scores outside 0..1 and reads a non-number as 0', () => {
    expect([scoreToConfidence(-0.5), scoreToConfidence(1.5), scoreToConfidence(Number.NaN)]).toEqual([0, 100, 0]);
  });

  test('the local thresholds are those of AWS', () => {
    expect([LOCAL_CAT_MIN_CONFIDENCE, LOCAL_REKOGNITION_MIN_CONFIDENCE]).toEqual([80, 20]);
  });

  test('the scores measured on the fixtures fall on the right side of the cat threshold', () => {
    // Arrange: model scores for Cat (local/detector/README.md): the weakest cat kept (greyscale), the
    // quarter-turned and 120 px cats; the best Cat on any non-cat photo (ihc.png), on a fixture (gravel.png).
    const cats = [0.2489, 0.2812, 0.2763, 0.5234];
    const nonCats = [0.1433, 0.1242, 0];

    // Act
    const catConfidences = cats.map(scoreToConfidence);
    const nonCatConfidences = nonCats.map(scoreToConfidence);

    // Assert
    expect(Math.min(...catConfidences)).toBeGreaterThanOrEqual(LOCAL_CAT_MIN_CONFIDENCE);
    expect(Math.max(...nonCatConfidences)).toBeLessThan(LOCAL_CAT_MIN_CONFIDENCE);
  });

  test('the clear cat photo stays below 99, so a client can still set a threshold above it', () => {
    expect(scoreToConfidence(0.5234)).toBeLessThan(99);
  });
});

describe('labels on the scale', () => {
  test("a label's Confidence and its instances' are the mapped score", () => {
    // Act
    const [cat] = toLabels([detection(0.2), detection(0.5)], { minConfidence: 0, maxLabels: 1000 });

    // Assert
    expect([cat?.Confidence, cat?.Instances.map((i) => i.Confidence)]).toEqual([97, [97, 80]]);
  });

  test('MinConfidence compares with the mapped score, not the raw one', () => {
    // Act: 0.19 is 68 on the scale, over a MinConfidence of 50 that the raw score x 100 (19) is under.
    const kept = toLabels([detection(0.19)], { minConfidence: 50, maxLabels: 1000 });
    const dropped = toLabels([detection(0.19)], { minConfidence: 70, maxLabels: 1000 });

    // Assert
    expect([kept.map((l) => [l.Name, l.Confidence]).slice(0, 1), dropped]).toEqual([[['Cat', 68]], []]);
  });

  test("a cat detection at the old local cat threshold (0.20) is a cat at Rekognition's 80", () => {
    // Act
    const labels = toLabels([detection(0.2)], { minConfidence: LOCAL_REKOGNITION_MIN_CONFIDENCE, maxLabels: 1000 });

    // Assert
    expect(labels.find((l) => l.Name === 'Cat')?.Confidence).toBeGreaterThanOrEqual(LOCAL_CAT_MIN_CONFIDENCE);
  });
});
