import { batchObjectPrefixes } from '../../lib/erase/objects';
import { batchItemKeysQuery, buildDeleteRequests } from '../../lib/store/batch/erasure';

describe('batchObjectPrefixes', () => {
  it("names the batch's folder under every prefix, each ending in '/' so a longer batch id never matches", () => {
    expect(batchObjectPrefixes('c1', 'b')).toEqual([
      'uploads/c1/b/',
      'processed/c1/b/',
      'duplicates/c1/b/',
      'failed/c1/b/',
      'thumbnails/c1/b/',
      'exports/c1/b/',
    ]);
  });
});

describe('erasure requests', () => {
  it('queries only the keys of the one partition, consistently, a page at a time', () => {
    expect(batchItemKeysQuery('T', 'c1', 'b', 7, { batch_id: 'c1#b', img_fprint: 'x' })).toEqual({
      TableName: 'T',
      KeyConditionExpression: '#pk = :pk',
      ProjectionExpression: '#pk, #sk',
      ExpressionAttributeNames: { '#pk': 'batch_id', '#sk': 'img_fprint' },
      ExpressionAttributeValues: { ':pk': 'c1#b' },
      ConsistentRead: true,
      Limit: 7,
      ExclusiveStartKey: { batch_id: 'c1#b', img_fprint: 'x' },
    });
  });

  it('deletes by key', () => {
    expect(buildDeleteRequests('T', [{ batch_id: 'c1#b', img_fprint: 'x' }])).toEqual({
      RequestItems: { T: [{ DeleteRequest: { Key: { batch_id: 'c1#b', img_fprint: 'x' } } }] },
    });
  });
});
