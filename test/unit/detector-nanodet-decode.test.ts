// NanoDet's outputs decoded without the model: scores per grid cell and class, box distributions per side.
import { letterbox } from '../../local/detector/decode';
import { nanodetInput } from '../../local/detector/nanodet';
import { decodeNanoDet, expectedDistance, NANODET_BINS, type NanoDetLevel } from '../../local/detector/nanodet-decode';

const opts = { minScore: 0.05, iouThreshold: 0.5, classCount: 80 };
const SIZE = 416;

/** A distribution sure of one distance (in strides): a high logit at that bin. */
const sureOf = (bin: number): number[] => Array.from({ length: NANODET_BINS }, (_, j) => (j === bin ? 20 : 0));

/** One stride's outputs, all zero but the cells given: class scores and the four sides' distances. */
function level(
  stride: number,
  cells: { cell: number; cls: number; score: number; sides: [number, number, number, number] }[],
): NanoDetLevel {
  const count = (SIZE / stride) ** 2;
  const scores = new Float32Array(count * 80);
  const boxes = new Float32Array(count * 4 * NANODET_BINS);
  for (const { cell, cls, score, sides } of cells) {
    scores[cell * 80 + cls] = score;
    sides.forEach((d, side) => boxes.set(sureOf(d), cell * 4 * NANODET_BINS + side * NANODET_BINS));
  }
  return { stride, scores, boxes };
}

describe('expectedDistance', () => {
  test('is the bin a sure distribution points at', () => {
    expect(expectedDistance(sureOf(3), 0)).toBeCloseTo(3, 6);
  });

  test('is the middle bin for a flat distribution', () => {
    expect(expectedDistance(new Array(NANODET_BINS).fill(1.5), 0)).toBeCloseTo(5, 6);
  });

  test('reads the distribution at its offset', () => {
    expect(expectedDistance([9, 9, ...sureOf(7)], 2)).toBeCloseTo(7, 6);
  });
});

describe('decodeNanoDet', () => {
  test("a cell's box spans its distances in strides around the cell's centre, on the original image", () => {
    // Arrange: stride 32 (a 13×13 grid), cell (6, 6) centred at (208, 208); 2 strides left and up, 3 right and down
    const lb = letterbox(SIZE, SIZE, SIZE);
    const levels = [level(32, [{ cell: 6 * 13 + 6, cls: 15, score: 0.6, sides: [2, 2, 3, 3] }]), level(16, []), level(8, [])];

    // Act
    const [cat, ...rest] = decodeNanoDet(levels, lb, opts);

    // Assert: 208 − 64 = 144 to 208 + 96 = 304
    expect(rest).toEqual([]);
    expect(cat?.classIndex).toBe(15);
    expect(cat?.score).toBeCloseTo(0.6, 6);
    expect(cat?.box.Left).toBeCloseTo(144 / SIZE, 4);
    expect(cat?.box.Width).toBeCloseTo(160 / SIZE, 4);
  });

  test('the letterbox padding is taken off the box', () => {
    // Arrange: a 416×208 image centred vertically (104 px above); cell (6, 6) at stride 32 spans y 144..304
    const lb = letterbox(SIZE, 208, SIZE);
    const levels = [level(32, [{ cell: 6 * 13 + 6, cls: 0, score: 0.9, sides: [2, 2, 3, 3] }])];

    // Act
    const [person] = decodeNanoDet(levels, lb, opts);

    // Assert: (144 − 104) / 208 and (304 − 144) / 208
    expect(person?.box.Top).toBeCloseTo(40 / 208, 4);
    expect(person?.box.Height).toBeCloseTo(160 / 208, 4);
  });

  test('scores under minScore are dropped, and overlapping boxes of a class suppressed', () => {
    // Arrange: two neighbouring cells see the same cat; a third cell's score is too low
    const cat = (cell: number, score: number) => ({ cell, cls: 15, score, sides: [3, 3, 3, 3] as [number, number, number, number] });
    const levels = [level(32, [cat(6 * 13 + 6, 0.7), cat(6 * 13 + 7, 0.5), cat(0, 0.01)])];

    // Act
    const found = decodeNanoDet(levels, letterbox(SIZE, SIZE, SIZE), opts);

    // Assert
    expect(found.map((d) => d.score)).toEqual([expect.closeTo(0.7, 6)]);
  });
});

describe('nanodetInput', () => {
  test('is channels first, blue first, each channel normalised by its mean and deviation', () => {
    // Arrange: one pixel, RGB (123.675, 116.28, 103.53 + 57.375)
    const rgb = new Float32Array([123.675, 116.28, 103.53 + 57.375]);

    // Act
    const input = Array.from(nanodetInput(rgb, 1));

    // Assert: B = (160.905 − 103.53) / 57.375 = 1, G = 0, R = 0
    expect(input.map((v) => Math.round(v * 1e4) / 1e4 || 0)).toEqual([1, 0, 0]);
  });
});
