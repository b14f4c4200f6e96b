import { bucketNameRefusal, keyRefusal, MAX_LAST_SEGMENT_BYTES } from '../../local/s3/object-keys';

describe('keyRefusal', () => {
  it('accepts the upload layout, folders, spaces, unicode and a trailing "/" (a folder marker)', () => {
    for (const key of ['uploads/demo/b1/holiday/cat 1.jpg', 'uploads/demo/b1/猫 (ü)+&=.png', 'uploads/demo/', 'a..b/.hidden/x..']) {
      expect(keyRefusal(key)).toBeUndefined();
    }
  });

  it('stores a last segment of 233 bytes: 255 minus the longest suffix s3rver appends ("._S3rver_metadata.json")', () => {
    expect(MAX_LAST_SEGMENT_BYTES).toBe(233);
    expect(keyRefusal(`f/${'a'.repeat(233)}`)).toBeUndefined();
    expect(keyRefusal(`f/${'a'.repeat(234)}`)).toMatchObject({ code: 'KeyTooLongError', detail: { Size: 234, MaxSizeAllowed: 233 } });
  });

  it('counts bytes, not characters', () => {
    // 117 × "é" is 234 bytes in UTF-8.
    expect(keyRefusal(`f/${'é'.repeat(117)}`)).toMatchObject({ code: 'KeyTooLongError' });
  });

  it('allows folder segments up to 255 bytes', () => {
    expect(keyRefusal(`${'d'.repeat(255)}/x`)).toBeUndefined();
    expect(keyRefusal(`${'d'.repeat(256)}/x`)).toMatchObject({ code: 'KeyTooLongError', detail: { MaxSizeAllowed: 255 } });
  });

  it("refuses keys over S3's 1024 bytes with S3's own message", () => {
    expect(keyRefusal('k/'.repeat(513))).toEqual({
      code: 'KeyTooLongError',
      message: 'Your key is too long',
      detail: { Size: 1026, MaxSizeAllowed: 1024 },
    });
  });

  it('refuses "." and ".." segments anywhere, empty segments before the last, and NUL', () => {
    for (const key of ['../x', 'a/../../x', 'a/..', 'a/./b', '.', '/x', 'a//b', 'a\0b']) {
      expect(keyRefusal(key)).toMatchObject({ code: 'InvalidArgument', detail: { ArgumentName: 'key', ArgumentValue: key } });
    }
  });
});

describe('bucketNameRefusal', () => {
  it('accepts S3 bucket names and refuses names that are not (and could be paths)', () => {
    expect(bucketNameRefusal('icecat-images')).toBeUndefined();
    for (const name of ['..', '.', 'ab', 'Upper', 'a..b', '-ab', 'a_b', '192.168.0.1', 'x'.repeat(64)]) {
      expect(bucketNameRefusal(name)).toMatchObject({ code: 'InvalidBucketName' });
    }
  });
});
