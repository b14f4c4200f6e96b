// The local S3 keeps each bucket's lookup and its CORS and website configurations in memory instead of reading them
// from disk for every request, and forgets them on the store's own bucket and configuration calls (docs/design.md §9).
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FilesystemStore } from '../../local/s3/s3rver-store';
import { hardenStore } from '../../local/s3/store';

// s3rver ships no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Store = require('s3rver/lib/stores/filesystem') as new (dir: string) => FilesystemStore;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { S3CorsConfiguration } = require('s3rver/lib/models/config') as { S3CorsConfiguration: new (xml: string) => { type: string } };

const CORS = (origin: string) =>
  `<CORSConfiguration><CORSRule><AllowedOrigin>${origin}</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>`;

describe('local S3 bucket configurations', () => {
  let dir: string;
  let store: FilesystemStore;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'icecat-s3-config-'));
    store = new Store(dir);
    hardenStore(store);
    await store.putBucket('photos');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const origins = async () => JSON.stringify(await store.getSubresource('photos', undefined, 'cors'));

  test('a configuration is read from disk once, then answered from memory', async () => {
    await store.putSubresource('photos', undefined, new S3CorsConfiguration(CORS('https://a.example')));
    const first = await origins();
    expect(first).toContain('https://a.example');
    // Gone from disk behind the store's back: the answer kept is still given.
    unlinkSync(path.join(dir, 'photos', '._S3rver_cors.xml'));
    expect(await origins()).toBe(first);
  });

  test('a configuration put or deleted through the store is seen at once', async () => {
    await store.putSubresource('photos', undefined, new S3CorsConfiguration(CORS('https://a.example')));
    expect(await origins()).toContain('https://a.example');
    await store.putSubresource('photos', undefined, new S3CorsConfiguration(CORS('https://b.example')));
    expect(await origins()).toContain('https://b.example');
    await store.deleteSubresource('photos', undefined, 'cors');
    expect(await store.getSubresource('photos', undefined, 'cors')).toBeNull();
  });

  test('a bucket deleted through the store is gone at once, and one made since is found', async () => {
    expect(await store.getBucket('photos')).not.toBeNull();
    await store.deleteBucket('photos');
    expect(await store.getBucket('photos')).toBeNull();
    await store.putBucket('photos');
    expect(await store.getBucket('photos')).not.toBeNull();
  });
});
