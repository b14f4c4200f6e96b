// The web app's pure parts: what it reads from the API's description, how it draws boxes and counts progress.

import type { Image } from '../../web/api';
import { capabilitiesOf } from '../../web/capabilities';
import { boxRect, nameParts, progressOf, topLabels } from '../../web/format';
import { nextSlice } from '../../web/groups';

const doc = {
  paths: {
    '/v1/batches': { post: {} },
    '/v1/batches/{batchId}': { get: {} },
    '/v1/batches/{batchId}/images': {
      get: {
        parameters: [
          { name: 'status', in: 'query' },
          { name: 'batchId', in: 'path' },
        ],
      },
    },
    '/v1/batches/{batchId}/images/{fprint}': { get: {} },
    '/v1/batches/{batchId}/images:batchGet': { post: {} },
  },
  components: { schemas: { CreateBatchRequest: { properties: { debug: {}, files: {} } } } },
};

describe('capabilities read from the OpenAPI document', () => {
  const caps = capabilitiesOf(doc);

  it('serves a concrete path by its template, method included', () => {
    expect([
      caps.serves('GET', '/v1/batches/b1'),
      caps.serves('GET', '/v1/batches'),
      caps.serves('POST', '/v1/batches/b1:close'),
      caps.serves('GET', '/v1/batches/b1/export'),
      caps.serves('POST', '/v1/batches/b1/images:batchGet'),
    ]).toEqual([true, false, false, false, true]);
  });

  it('knows the query parameters of the matching route only', () => {
    expect([caps.takes('GET', '/v1/batches/b1/images', 'status'), caps.takes('GET', '/v1/batches/b1/images', 'cat')]).toEqual([
      true,
      false,
    ]);
  });

  it('offers batch names only where POST /v1/batches takes batchId', () => {
    const named = capabilitiesOf({ ...doc, components: { schemas: { CreateBatchRequest: { properties: { batchId: {} } } } } });

    expect([caps.namesBatches, named.namesBatches]).toEqual([false, true]);
  });
});

describe('a cat box over the image', () => {
  it("is Rekognition's relative BoundingBox in the overlay's 0..100 units", () => {
    expect(boxRect({ left: 0.25, top: 0.1, width: 0.5, height: 0.4 })).toEqual({ x: 25, y: 10, width: 50, height: 40 });
  });

  it('is cut at the image edges when Rekognition reaches past them', () => {
    expect(boxRect({ left: -0.1, top: 0.8, width: 0.5, height: 0.4 })).toEqual({ x: 0, y: 80, width: 40, height: 20 });
  });
});

describe('a batch progress bar', () => {
  it('counts finished files against the larger of arrived and declared', () => {
    const batch = {
      batchId: 'b',
      status: 'open' as const,
      expected: 10,
      debug: false,
      createdAt: '',
      expiresAt: '',
      counts: { total: 4, success: 2, fail: 1, duplicate: 0, cats: 1 },
    };

    expect(progressOf(batch)).toEqual({ finished: 3, of: 10 });
  });
});

describe('the near-duplicate groups shown per thumbnails call', () => {
  const groups = (...sizes: number[]) => sizes.map((n, g) => ({ fprints: Array.from({ length: n }, (_, i) => `${g}-${i}`) }));

  it("takes whole groups up to the call's most keys, the next slice from where the last ended", () => {
    const all = groups(40, 40, 30, 2);

    expect([nextSlice(all, 0), nextSlice(all, 2), nextSlice(all, 4)]).toEqual([2, 4, 4]);
  });

  it('takes a group larger than one call alone', () => {
    expect(nextSlice(groups(150, 2), 0)).toBe(1);
  });
});

describe("a card's labels and file name", () => {
  const labels = [
    { name: 'Dog', confidence: 60 },
    { name: 'Canine', confidence: 60 },
    { name: 'Mammal', confidence: 55 },
    { name: 'Cat', confidence: 28 },
  ];
  const image = (isCat: boolean, ls = labels) => ({ fprint: 'f', status: 'success', isCat, labels: ls, duplicates: 0 }) as unknown as Image;

  it("names a cat's Cat label first, whatever its rank, so the badge and the labels agree", () => {
    expect([topLabels(image(true)), topLabels(image(true, labels.slice(0, 3))), topLabels(image(false))]).toEqual([
      'Cat, Dog, Canine',
      'Cat, Dog, Canine',
      'Dog, Canine, Mammal',
    ]);
  });

  it('cuts a file name only after / _ - and .', () => {
    expect([nameParts('cat_kitten_boxed.jpg'), nameParts('holiday/neg-bus.jpg'), nameParts('photo')]).toEqual([
      ['cat_', 'kitten_', 'boxed.', 'jpg'],
      ['holiday/', 'neg-', 'bus.', 'jpg'],
      ['photo'],
    ]);
  });
});
