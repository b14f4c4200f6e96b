// The web app's built files. Run from source (the local stack, tests), they are built here on first use with
// esbuild (lib/web/build.ts); in a Lambda bundle, scripts/bundle.ts replaces this module with the files built
// at packaging time, so neither esbuild nor the app's sources reach Lambda.
// The import is static so that it resolves while the handler module loads (under tsx or jest's transform), not at
// the first request.
import { buildWebBundle } from './build';
import type { WebBundle } from './site';

let built: Promise<WebBundle> | undefined;

export function loadWebBundle(): Promise<WebBundle> {
  built ??= buildWebBundle().catch((error: unknown) => {
    built = undefined;
    throw error;
  });
  return built;
}
