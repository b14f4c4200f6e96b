// Per-label mappings onto Rekognition's scale: proven labels through their boundary, unproven ones under 80, and the
// fit and its measures on labelled photos.

import { ConfigError } from '../../lib/config';
import { DETECTOR_MODELS, detectorModelName } from '../../local/detector/model-catalog';
import { fitBoundaries, labelQuality, leaveOneOut, type Observation } from '../../local/detector/scale-fit';
import { labelConfidence, MODEL_SCALES, type ModelScale, provenKnots, UNPROVEN_CEILING } from '../../local/detector/scales';
import { SCALE_KNOTS } from '../../local/detector/thresholds';

const scale: ModelScale = { mappingVersion: 't', floor: 0.15, boundaries: { Cat: 0.2 } };
const photo = (image: string, labels: string[], scores: Record<string, number>, group?: string): Observation => ({
  image,
  labels,
  scores,
  group,
});

describe('labelConfidence', () => {
  test("a proven label's curve at a boundary of 0.20 is decision 0001's Cat curve", () => {
    expect(provenKnots(0.2)).toEqual(SCALE_KNOTS.map((k) => ({ score: expect.closeTo(k.score, 9), confidence: k.confidence })));
  });

  test('a proven label reaches 80 at its boundary', () => {
    expect(labelConfidence(scale, 'Cat', 0.2)).toBeCloseTo(80, 9);
  });

  test('a label that never proved itself stays under 80 even at a score of 1, yet is recorded above the floor', () => {
    // Act
    const [atFloor, atOne, strong] = [0.15, 1, 0.57].map((s) => labelConfidence(scale, 'Dog', s));

    // Assert
    expect([atFloor, atOne]).toEqual([20, UNPROVEN_CEILING]);
    expect(strong).toBeLessThan(80);
  });

  test("every model's mapping keeps a boundary for Cat", () => {
    expect(DETECTOR_MODELS.map((m) => typeof MODEL_SCALES[m].boundaries.Cat)).toEqual(DETECTOR_MODELS.map(() => 'number'));
  });
});

describe('fitBoundaries', () => {
  test("a label's boundary lies midway between its weakest right score and its best wrong one", () => {
    // Arrange
    const photos = [photo('a', ['Cup'], { Cup: 0.6 }), photo('b', ['Cup'], { Cup: 0.4 }), photo('c', [], { Cup: 0.2 })];

    // Act / Assert
    expect(fitBoundaries(photos)).toEqual({ Cup: 0.3 });
  });

  test('where wrong scores reach the right ones, the boundary goes just above the best wrong one', () => {
    // Arrange
    const photos = [photo('a', ['Clock'], { Clock: 0.3 }), photo('b', [], { Clock: 0.5 })];

    // Act / Assert
    expect(fitBoundaries(photos)).toEqual({ Clock: 0.51 });
  });

  test('a label never named, or named and never scored, gets no boundary; a fixed one is kept', () => {
    // Arrange
    const photos = [photo('a', ['Horse'], { Dog: 0.9 }), photo('b', [], { Umbrella: 0.8 })];

    // Act / Assert
    expect(fitBoundaries(photos, { Cat: 0.2 })).toEqual({ Cat: 0.2 });
  });
});

describe('labelQuality and leaveOneOut', () => {
  const photos = [
    photo('cat', ['Cat'], { Cat: 0.5, Dog: 0.6 }, 'cat'),
    photo('grey cat', ['Cat'], { Cat: 0.25 }, 'cat'),
    photo('cup', ['Cup'], { Cup: 0.5 }),
    photo('texture', [], { Cup: 0.1, Cat: 0.05 }),
  ];

  test('counts the labels at 80 or above that were named, and the named ones found', () => {
    // Act
    const q = labelQuality(photos, () => ({ ...scale, boundaries: { Cat: 0.2, Cup: 0.3 } }));

    // Assert
    expect(q).toMatchObject({ sure: 3, right: 3, precision: 1, named: 3, found: 3, recall: 1, wrong: [] });
  });

  test('one curve for every label makes the unproven Dog a wrong label at 80 or above', () => {
    // Act
    const q = labelQuality(photos, () => ({ ...scale, boundaries: { Cat: 0.2, Cup: 0.2, Dog: 0.2 } }));

    // Assert
    expect([q.precision, q.wrong]).toEqual([0.75, ['cat: Dog 97.6']]);
  });

  test('leave-one-out judges each photo without its group: the only cup photo cannot prove Cup for itself', () => {
    // Act
    const q = leaveOneOut(photos, photos, scale);

    // Assert: the two cat photos share a group, so neither proves Cat for the other: nothing reaches 80
    expect([q.found, q.named, q.precision]).toEqual([0, 3, null]);
  });
});

describe('detectorModelName', () => {
  test('is CenterNet when ICECAT_DETECTOR_MODEL is unset or empty', () => {
    expect([detectorModelName(undefined), detectorModelName('')]).toEqual(['centernet', 'centernet']);
  });

  test('takes a known name', () => {
    expect(detectorModelName('nanodet')).toBe('nanodet');
  });

  test('refuses an unknown name with one line naming the known ones', () => {
    expect(() => detectorModelName('yolo')).toThrow(
      new ConfigError('environment variable ICECAT_DETECTOR_MODEL must be one of centernet, nanodet, got "yolo"'),
    );
  });
});

describe('fitBoundaries and the label floor', () => {
  test('no boundary lies under the floor: a right label scoring under it stays under 80', () => {
    // Arrange: Spoon at 0.09 where named, 0.05 where not: midway would be 0.07
    const photos = [photo('coffee', ['Spoon'], { Spoon: 0.09 }), photo('texture', [], { Spoon: 0.05 })];

    // Act / Assert
    expect(fitBoundaries(photos, {}, 0.15)).toEqual({ Spoon: 0.15 });
  });
});
