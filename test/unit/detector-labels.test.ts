import {
  ancestorsOf,
  type FoundObject,
  KNOWN_LABELS,
  labelForClass,
  labelInfo,
  passesFilters,
  toLabels,
} from '../../local/detector/labels';
import { COCO_CLASSES } from '../../local/detector/taxonomy';

const CAT = COCO_CLASSES.indexOf('cat');
const DOG = COCO_CLASSES.indexOf('dog');
const CUP = COCO_CLASSES.indexOf('cup');
const box = { Left: 0.1, Top: 0.2, Width: 0.5, Height: 0.6 };
const detection = (classIndex: number, score: number): FoundObject => ({ classIndex, score, box });
const everything = { minConfidence: 0, maxLabels: 1000 };

describe('label vocabulary', () => {
  test('every COCO class maps to a label of the vocabulary', () => {
    // Arrange
    const indexes = COCO_CLASSES.map((_, i) => i);

    // Act
    const names = indexes.map((i) => labelForClass(i));

    // Assert
    expect(names.every((n) => n !== undefined && KNOWN_LABELS.includes(n))).toBe(true);
  });

  test('class indexes outside the model have no label', () => {
    expect([labelForClass(-1), labelForClass(80), labelForClass(1.5)]).toEqual([undefined, undefined, undefined]);
  });

  test('Cat has the parents Pet, Mammal and Animal, most specific first', () => {
    expect(labelInfo('Cat').parents).toEqual(['Pet', 'Mammal', 'Animal']);
  });

  test('Cat is in the Animals and Pets category', () => {
    expect(labelInfo('Cat').categories).toEqual(['Animals and Pets']);
  });

  test('every ancestor of every label is itself a known label', () => {
    // Act
    const ancestors = KNOWN_LABELS.flatMap((name) => ancestorsOf(name));

    // Assert
    expect(ancestors.filter((a) => !KNOWN_LABELS.includes(a))).toEqual([]);
  });

  test('no label is its own ancestor', () => {
    expect(KNOWN_LABELS.filter((name) => ancestorsOf(name).includes(name))).toEqual([]);
  });

  test('a class with several ancestry paths lists each ancestor once', () => {
    expect(ancestorsOf('Dog')).toEqual(['Canine', 'Pet', 'Mammal', 'Animal']);
  });
});

describe('toLabels', () => {
  test('a cat detection yields Cat with its instance and its ancestors without instances', () => {
    // Act
    const labels = toLabels([detection(CAT, 0.5)], everything);

    // Assert
    expect(labels.map((l) => [l.Name, l.Confidence, l.Instances.length])).toEqual([
      ['Cat', 97, 1],
      ['Mammal', 97, 0],
      ['Pet', 97, 0],
      ['Animal', 97, 0],
    ]);
  });

  test('a label carries Parents, Aliases and Categories as Rekognition names them', () => {
    // Act
    const [cat] = toLabels([detection(CAT, 0.5)], everything);

    // Assert
    expect(cat).toEqual({
      Name: 'Cat',
      Confidence: 97,
      Instances: [{ BoundingBox: box, Confidence: 97 }],
      Parents: [{ Name: 'Pet' }, { Name: 'Mammal' }, { Name: 'Animal' }],
      Aliases: [],
      Categories: [{ Name: 'Animals and Pets' }],
    });
  });

  test('an ancestor takes the confidence of its best descendant', () => {
    // Act
    const labels = toLabels([detection(CAT, 0.6), detection(DOG, 0.3)], everything);

    // Assert: Cat's 0.6 is 97.6 on Rekognition's scale (thresholds.ts), above Dog's
    expect(labels.find((l) => l.Name === 'Pet')?.Confidence).toBe(97.6);
  });

  test('two instances of a class make one label with both instances, best first', () => {
    // Act
    const [cat] = toLabels([detection(CAT, 0.2), detection(CAT, 0.6)], everything);

    // Assert
    expect(cat?.Instances.map((i) => i.Confidence)).toEqual([97.6, 80]);
  });

  test('detections below MinConfidence are left out', () => {
    // Act
    // 0.19 is 68 on Rekognition's scale, 0.4 is 91.33 (thresholds.ts)
    const labels = toLabels([detection(CAT, 0.19), detection(CUP, 0.4)], { minConfidence: 80, maxLabels: 1000 });

    // Assert
    expect(labels.map((l) => l.Name)).toEqual(['Cup']);
  });

  test('MaxLabels keeps the most confident labels, the most specific first on ties', () => {
    // Act
    const labels = toLabels([detection(CAT, 0.5), detection(CUP, 0.2)], { minConfidence: 0, maxLabels: 2 });

    // Assert
    expect(labels.map((l) => l.Name)).toEqual(['Cat', 'Mammal']);
  });

  test('a label exclusion filter removes that label only', () => {
    // Act
    const labels = toLabels([detection(CAT, 0.5)], { ...everything, filters: { LabelExclusionFilters: ['Cat'] } });

    // Assert
    expect(labels.map((l) => l.Name)).toEqual(['Mammal', 'Pet', 'Animal']);
  });

  test('a label inclusion filter keeps only the named labels', () => {
    // Act
    const labels = toLabels([detection(CAT, 0.5), detection(CUP, 0.5)], {
      ...everything,
      filters: { LabelInclusionFilters: ['Cat', 'Cup'] },
    });

    // Assert
    expect(labels.map((l) => l.Name)).toEqual(['Cat', 'Cup']);
  });

  test('a category inclusion filter keeps only labels of that category', () => {
    // Act
    const labels = toLabels([detection(CAT, 0.5), detection(CUP, 0.6)], {
      ...everything,
      filters: { LabelCategoryInclusionFilters: ['Kitchen and Dining'] },
    });

    // Assert
    expect(labels.map((l) => l.Name)).toEqual(['Cup']);
  });

  test('detections of unknown classes are ignored', () => {
    expect(toLabels([detection(99, 0.9)], everything)).toEqual([]);
  });
});

describe('passesFilters', () => {
  const cat = { name: 'Cat', categories: ['Animals and Pets'] };

  test('without filters every label passes', () => {
    expect(passesFilters(cat)).toBe(true);
  });

  test('an exclusion filter wins over an inclusion filter naming the same label', () => {
    expect(passesFilters(cat, { LabelInclusionFilters: ['Cat'], LabelExclusionFilters: ['Cat'] })).toBe(false);
  });

  test('a category exclusion filter removes a label that a label inclusion filter names', () => {
    expect(passesFilters(cat, { LabelInclusionFilters: ['Cat'], LabelCategoryExclusionFilters: ['Animals and Pets'] })).toBe(false);
  });

  test('an inclusion filter for another label leaves this one out', () => {
    expect(passesFilters(cat, { LabelInclusionFilters: ['Dog'] })).toBe(false);
  });

  test('filters compare names case-insensitively', () => {
    expect(passesFilters(cat, { LabelInclusionFilters: ['cat'] })).toBe(true);
  });
});
