import { clientScopeRefusal } from '../../local/s3/scope';

const judge = (method: string, url: string, headers: Record<string, string> = {}) =>
  clientScopeRefusal({ method, url, headers }, 'acme') === undefined ? 'allowed' : 'denied';

describe("a client key's scope (uploads/{clientId}/, write and list)", () => {
  it.each([
    ['PUT', '/b/uploads/acme/b1/cat.jpg?x-id=PutObject'],
    ['PUT', '/b/uploads/acme/b1/cat%20one.jpg'],
    ['POST', '/b/uploads/acme/b1/big.jpg?uploads&x-id=CreateMultipartUpload'],
    ['PUT', '/b/uploads/acme/b1/big.jpg?partNumber=1&uploadId=u&x-id=UploadPart'],
    ['POST', '/b/uploads/acme/b1/big.jpg?uploadId=u'],
    ['DELETE', '/b/uploads/acme/b1/big.jpg?uploadId=u'],
    ['GET', '/b/uploads/acme/b1/big.jpg?uploadId=u&max-parts=10'],
    ['GET', '/b?list-type=2&prefix=uploads%2Facme%2F&continuation-token=t'],
    ['GET', '/b?prefix=uploads/acme/b1/&delimiter=/&marker=m'],
    ['PUT', '/b/uploads/acme/b1/cat.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=c&X-Amz-Signature=s'],
  ])('allows %s %s', (method, url) => {
    expect(judge(method, url)).toBe('allowed');
  });

  it.each([
    ['PUT', '/b/uploads/other/b1/cat.jpg'],
    ['PUT', '/b/uploads/acmeX/b1/cat.jpg'],
    ['PUT', '/b/processed/acme/b1/cat.jpg'],
    ['GET', '/b/uploads/acme/b1/cat.jpg'],
    ['HEAD', '/b/uploads/acme/b1/cat.jpg'],
    ['DELETE', '/b/uploads/acme/b1/cat.jpg'],
    ['PUT', '/b/uploads/acme/b1/cat.jpg?tagging'],
    ['PUT', '/b/uploads/acme/b1/cat.jpg?acl'],
    ['GET', '/b?list-type=2'],
    ['GET', '/b?list-type=2&prefix=uploads%2Facme'],
    ['GET', '/b?list-type=2&prefix=uploads/other/'],
    ['GET', '/b?uploads&prefix=uploads/acme/'],
    ['GET', '/b?cors'],
    ['PUT', '/b?cors'],
    ['HEAD', '/b'],
    ['POST', '/b?delete'],
    ['PUT', '/newbucket'],
  ])('denies %s %s', (method, url) => {
    expect(judge(method, url)).toBe('denied');
  });

  it('denies a copy into its prefix (it would read the source) and an upload-part copy', () => {
    expect(judge('PUT', '/b/uploads/acme/b1/cat.jpg', { 'x-amz-copy-source': '/b/uploads/other/x.jpg' })).toBe('denied');
    expect(judge('PUT', '/b/uploads/acme/b1/cat.jpg?partNumber=1&uploadId=u', { 'x-amz-copy-source': '/b/processed/acme/x.jpg' })).toBe(
      'denied',
    );
  });
});
