import { decodeCenterNet, iou, letterbox, suppressOverlaps, toOriginalBox } from '../../local/detector/decode';
import type { FoundObject } from '../../local/detector/labels';

const opts = { minScore: 0.01, iouThreshold: 0.5, classCount: 80 };

describe('letterbox', () => {
  test('a landscape image is centred vertically', () => {
    expect(letterbox(512, 340, 512)).toEqual({ size: 512, width: 512, height: 340, padLeft: 0, padTop: 86 });
  });

  test('a portrait image is centred horizontally', () => {
    expect(letterbox(256, 512, 512)).toEqual({ size: 512, width: 256, height: 512, padLeft: 128, padTop: 0 });
  });
});

describe('toOriginalBox', () => {
  test('a box in input pixels becomes ratios of the original image, padding removed', () => {
    // Arrange: 256x512 image centred in 512x512 (128 px padding each side)
    const lb = letterbox(256, 512, 512);

    // Act
    const box = toOriginalBox(128 + 64, 128, 128 + 192, 384, lb);

    // Assert
    expect(box).toEqual({ Left: 0.25, Top: 0.25, Width: 0.5, Height: 0.5 });
  });

  test('a box reaching into the padding is clipped to the image', () => {
    // Arrange
    const lb = letterbox(256, 512, 512);

    // Act
    const box = toOriginalBox(0, -10, 200, 600, lb);

    // Assert
    expect(box).toEqual({ Left: 0, Top: 0, Width: 0.28125, Height: 1 });
  });
});

describe('suppressOverlaps', () => {
  const det = (classIndex: number, score: number, Left: number): FoundObject => ({
    classIndex,
    score,
    box: { Left, Top: 0, Width: 0.5, Height: 0.5 },
  });

  test('the weaker of two overlapping boxes of one class is dropped', () => {
    expect(suppressOverlaps([det(15, 0.3, 0.02), det(15, 0.5, 0)], 0.5)).toEqual([det(15, 0.5, 0)]);
  });

  test('overlapping boxes of different classes are both kept', () => {
    expect(suppressOverlaps([det(15, 0.5, 0), det(16, 0.3, 0)], 0.5)).toHaveLength(2);
  });

  test('separate boxes of one class are both kept', () => {
    expect(suppressOverlaps([det(15, 0.5, 0), det(15, 0.4, 0.5)], 0.5)).toHaveLength(2);
  });
});

describe('iou', () => {
  test('identical boxes overlap fully', () => {
    const b = { Left: 0.1, Top: 0.1, Width: 0.2, Height: 0.2 };
    expect(iou(b, b)).toBeCloseTo(1);
  });

  test('disjoint boxes do not overlap', () => {
    expect(iou({ Left: 0, Top: 0, Width: 0.1, Height: 0.1 }, { Left: 0.5, Top: 0.5, Width: 0.1, Height: 0.1 })).toBe(0);
  });
});

describe('decodeCenterNet', () => {
  const lb = letterbox(512, 512, 512);

  test('rows become detections with class, score and box', () => {
    expect(decodeCenterNet([[0, 0, 256, 512, 0.5, 15]], lb, opts)).toEqual([
      { classIndex: 15, score: 0.5, box: { Left: 0, Top: 0, Width: 0.5, Height: 1 } },
    ]);
  });

  test('rows below the minimum score are dropped', () => {
    expect(decodeCenterNet([[0, 0, 256, 512, 0.005, 15]], lb, opts)).toEqual([]);
  });

  test('rows of a class the model does not have are dropped', () => {
    expect(decodeCenterNet([[0, 0, 256, 512, 0.5, 80]], lb, opts)).toEqual([]);
  });

  test('rows with NaN scores are dropped', () => {
    expect(decodeCenterNet([[0, 0, 256, 512, Number.NaN, 15]], lb, opts)).toEqual([]);
  });

  test('boxes entirely inside the padding are dropped', () => {
    // Arrange: a wide image leaves padding above and below
    const wide = letterbox(512, 256, 512);

    // Act
    const out = decodeCenterNet([[0, 0, 100, 100, 0.5, 15]], wide, opts);

    // Assert
    expect(out).toEqual([]);
  });
});
