import { copySourceTarget, listedETags, requestTarget } from '../../local/s3/requests';

describe('requestTarget', () => {
  it('decodes bucket and key of a path-style request as the router does, keeping empty and ".." segments visible', () => {
    expect(requestTarget('/icecat-images/uploads/demo/b/cat%201%2B.jpg')).toEqual({
      bucket: 'icecat-images',
      key: 'uploads/demo/b/cat 1+.jpg',
    });
    expect(requestTarget('/icecat-images//rooted.txt')).toEqual({ bucket: 'icecat-images', key: '/rooted.txt' });
    expect(requestTarget('/icecat-images/a/%2E%2E/x')).toEqual({ bucket: 'icecat-images', key: 'a/../x' });
    expect(requestTarget('/icecat-images')).toEqual({ bucket: 'icecat-images', key: undefined });
  });
});

describe('copySourceTarget', () => {
  it('reads bucket and key from an SDK-encoded header, with or without a leading "/" and a versionId', () => {
    expect(copySourceTarget('icecat-images/uploads/demo/b/a%2Bb%20c.jpg')).toEqual({
      bucket: 'icecat-images',
      key: 'uploads/demo/b/a+b c.jpg',
    });
    expect(copySourceTarget('/icecat-images/k.jpg?versionId=3')).toEqual({ bucket: 'icecat-images', key: 'k.jpg' });
    expect(copySourceTarget('no-key')).toBeUndefined();
  });
});

describe('listedETags', () => {
  it('unquotes every ETag of a header, weak ones included, and keeps "*"', () => {
    expect(listedETags('"abc", W/"def" ,*')).toEqual(['abc', 'def', '*']);
    expect(listedETags('abc')).toEqual(['abc']);
  });
});
