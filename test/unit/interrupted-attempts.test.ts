// Which uploads a restarted local stack takes an attempt back from: those its interrupted messages notify.

import { s3EventMessage, s3EventRecord } from '../../lib/reconcile/s3-event';
import { uploadsOfBodies } from '../../local/stack/interrupted-attempts';

const message = (key: string, eTag?: string) =>
  s3EventMessage(
    s3EventRecord({ operation: 'Put', bucket: 'b', key, size: 1, eTag, sourceIp: '127.0.0.1', time: new Date(0) }, { region: 'us-east-1' }),
  );

describe('uploadsOfBodies', () => {
  it('places each notified upload in its batch, with its ETag, decoding the key as S3 encodes it', () => {
    expect(uploadsOfBodies([message('uploads/demo/b1/my cat+1.png', 'e1'), message('uploads/demo/b2/x.png')])).toEqual([
      { clientId: 'demo', batchId: 'b1', key: 'uploads/demo/b1/my cat+1.png', etag: 'e1' },
      { clientId: 'demo', batchId: 'b2', key: 'uploads/demo/b2/x.png' },
    ]);
  });

  it('skips what belongs to no batch: keys outside the layout, test events, bodies that are not JSON', () => {
    expect(uploadsOfBodies([message('uploads/stray.png', 'e1'), JSON.stringify({ Event: 's3:TestEvent' }), 'not json'])).toEqual([]);
  });
});
