// The web app's built files. Run from source (the local stack, tests), they are built here on first use with
// esbuild (scripts/build-web.ts); in a Lambda bundle, scripts/bundle.ts replaces this module with the files built
// at packaging time, so neither esbuild nor the app's sources reach Lambda.
import type { WebBundle } from './site';

let built: Promise<WebBundle> | undefined;

export function loadWebBundle(): Promise<WebBundle> {
  built ??= import('../../scripts/build-web')
    .then((m) => m.buildWebBundle())
    .catch((error: unknown) => {
      built = undefined;
      throw error;
    });
  return built;
}
