import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { HttpAnswer } from '../../lib/api/http-answer';
import { contentSecurityPolicy, s3Origins, UnknownAssetError, type WebBundle, WebSite } from '../../lib/web/site';
import { bucketCorsRulesFromYaml } from '../../local/s3/cors';

const file = (name: string, contentType: string, text: string) => ({
  name,
  contentType,
  gzipBase64: gzipSync(Buffer.from(text)).toString('base64'),
  bytes: text.length,
  etag: `"${name}-etag"`,
});
const bundle: WebBundle = {
  assets: [
    file('index.html', 'text/html; charset=utf-8', '<!doctype html><script type="module" src="/app/app-ABCDEFGH.js"></script>'),
    file('app-ABCDEFGH.js', 'text/javascript; charset=utf-8', 'console.log(1)'),
    file('icon.svg', 'image/svg+xml', '<svg/>'),
  ],
};
const site = new WebSite(bundle, ['http://127.0.0.1:4569']);
const body = (res: HttpAnswer) => {
  const bytes = Buffer.from(res.body, 'base64');
  return (res.headers['Content-Encoding'] === 'gzip' ? gunzipSync(bytes) : bytes).toString();
};

describe('the web app as the API serves it', () => {
  it('answers the page gzip-compressed to a browser that accepts gzip, under the security headers', () => {
    const res = site.page({ headers: { 'accept-encoding': 'gzip, deflate, br' } });

    expect([res.statusCode, res.headers['Content-Encoding'], res.isBase64Encoded]).toEqual([200, 'gzip', true]);
    expect(body(res)).toContain('<!doctype html>');
    expect(res.headers).toMatchObject({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': expect.stringContaining("frame-ancestors 'none'"),
    });
  });

  it('answers it uncompressed to a client that does not accept gzip (or refuses it with q=0)', () => {
    for (const accept of [undefined, 'identity', 'gzip;q=0']) {
      const res = site.page({ headers: { 'accept-encoding': accept } });

      expect([accept, res.headers['Content-Encoding'], body(res)]).toEqual([accept, undefined, expect.stringContaining('<!doctype html>')]);
    }
  });

  it('answers 304 to a revalidation with the current ETag', () => {
    const res = site.asset('app-ABCDEFGH.js', { headers: { 'if-none-match': '"app-ABCDEFGH.js-etag"' } });

    expect([res.statusCode, res.body]).toEqual([304, '']);
  });

  it('caches content-hashed files for good, and revalidates the others', () => {
    const script = site.asset('app-ABCDEFGH.js', { headers: {} });
    const icon = site.asset('icon.svg', { headers: {} });

    expect([script.headers['Cache-Control'], icon.headers['Cache-Control']]).toEqual(['public, max-age=31536000, immutable', 'no-cache']);
  });

  it('knows no other file, and does not serve the page under /app/', () => {
    expect(() => site.asset('app-XXXXXXXX.js', { headers: {} })).toThrow(UnknownAssetError);
    expect(() => site.asset('index.html', { headers: {} })).toThrow(UnknownAssetError);
  });
});

describe('Content-Security-Policy', () => {
  it('allows scripts and styles from the API alone, never inline, and images and uploads from the bucket too', () => {
    const csp = contentSecurityPolicy(['https://b.s3.eu-west-1.amazonaws.com']);

    expect(csp.split('; ')).toEqual([
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' https://b.s3.eu-west-1.amazonaws.com",
      "connect-src 'self' https://b.s3.eu-west-1.amazonaws.com",
      "object-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ]);
  });

  it("names the local S3's origin, or on AWS the bucket's regional and global endpoints", () => {
    expect(s3Origins({ endpoint: 'http://127.0.0.1:4569/', bucket: 'b' })).toEqual(['http://127.0.0.1:4569']);
    expect(s3Origins({ bucket: 'icecat-dev', region: 'eu-west-1' })).toEqual([
      'https://icecat-dev.s3.eu-west-1.amazonaws.com',
      'https://icecat-dev.s3.amazonaws.com',
    ]);
    expect(s3Origins({})).toEqual([]);
  });
});

describe('the bucket CORS rules the local S3 applies', () => {
  it('are those of resources/storage.yml: browsers may POST the presigned forms', () => {
    const rules = bucketCorsRulesFromYaml(readFileSync(path.join(__dirname, '..', '..', 'resources', 'storage.yml'), 'utf8'));

    expect(rules).toEqual([expect.objectContaining({ AllowedMethods: expect.arrayContaining(['POST']), AllowedOrigins: ['*'] })]);
  });

  it("let the web app's origin, and only it, GET (an export's redirect): on AWS the HTTP API's, locally the local API's", () => {
    const rules = bucketCorsRulesFromYaml(
      readFileSync(path.join(__dirname, '..', '..', 'resources', 'storage.yml'), 'utf8'),
      'http://127.0.0.1:3000',
    );

    expect(rules.map((r) => [r.AllowedMethods, r.AllowedOrigins])).toEqual([
      [['POST'], ['*']],
      [['GET'], ['http://127.0.0.1:3000']],
    ]);
  });
});
