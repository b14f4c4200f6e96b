// Each function on the local stack signs as itself: while the stack builds a function (imports its handler module,
// calls its factory), every AWS client built is given that function's own key (lib/aws/clients.ts signNewClientsWith),
// so its requests, and the presigned URLs and forms it hands out, name it to the stand-ins. Fixed at construction, as
// on Lambda, where a container's clients hold its role's credentials: nothing is looked up per request (an
// AsyncLocalStorage would turn on promise hooks for the whole process on Node 20). Builds are serialized: two at once
// would mix their keys.
import { signNewClientsWith } from '../../lib/aws/clients';
import { functionCredentials } from './iam';

let tail: Promise<unknown> = Promise.resolve();

/** Builds `fn`'s handler with `build`, every client it builds meanwhile signing with `fn`'s own key. */
export function buildAs<T>(fn: string, build: () => Promise<T> | T): Promise<T> {
  const run = async () => {
    signNewClientsWith(functionCredentials(fn));
    try {
      return await build();
    } finally {
      signNewClientsWith(undefined);
    }
  };
  const result = tail.then(run, run);
  tail = result.catch(() => undefined);
  return result;
}
