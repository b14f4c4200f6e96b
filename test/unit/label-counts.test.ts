import { countLabels, topLabelCounts } from '../../lib/store/batch/label-counts';

describe('label counts', () => {
  it('counts each label once per image, at or above the threshold', () => {
    const counts = new Map<string, number>();

    countLabels(
      counts,
      [
        { name: 'Cat', confidence: 90 },
        { name: 'Cat', confidence: 85 },
        { name: 'Dog', confidence: 79.9 },
      ],
      80,
    );
    countLabels(
      counts,
      [
        { name: 'Cat', confidence: 80 },
        { name: 'Dog', confidence: 95 },
      ],
      80,
    );

    expect([...counts]).toEqual([
      ['Cat', 2],
      ['Dog', 1],
    ]);
  });

  it('ranks by images, then by name, and keeps the top 20', () => {
    const counts = new Map(Array.from({ length: 25 }, (_, i) => [`L${String(i).padStart(2, '0')}`, i % 5] as const));

    const top = topLabelCounts(counts);

    expect(top).toHaveLength(20);
    expect(top.slice(0, 3)).toEqual([
      { name: 'L04', images: 4 },
      { name: 'L09', images: 4 },
      { name: 'L14', images: 4 },
    ]);
  });
});
