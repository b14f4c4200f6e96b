// The web app (DESIGN §7): sign in with an API key, the client's batches, a batch's gallery and actions, one image, a
// debug batch's logs, new batches by drag and drop, and a batch's review (a person's verdicts, by keyboard or touch). It shows only what the API answers for the signed-in key.
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { createApi } from './api';
import { skipToMain } from './focus';
import { type HashRoute, href, useRoute } from './route';
import { readKey, saveKey, signOut } from './session';
import { BatchView } from './views/batch';
import { BatchList } from './views/batch-list';
import { ImageView } from './views/image';
import { LogsView } from './views/logs';
import { NewBatch } from './views/new-batch';
import { ReviewView } from './views/review';
import { SignIn } from './views/sign-in';

/** Each view's own tab title, so a screen reader (and the tab strip) says where a navigation led. */
function titleOf(route: HashRoute): string {
  if (route.view === 'batches') return 'Batches';
  if (route.view === 'new') return 'New batch';
  if (route.view === 'logs') return `Logs of ${route.batchId}`;
  if (route.view === 'image') return `Image in ${route.batchId}`;
  if (route.view === 'review') return `Review ${route.batchId}`;
  return route.filter === 'all' ? route.batchId : `${route.batchId} (${route.filter.replace('-', ' ')})`;
}

function App() {
  const [key, setKey] = useState(readKey);
  const [notice, setNotice] = useState<string | null>(null);
  const route = useRoute();
  useEffect(() => {
    document.title = key ? `${titleOf(route)} · IceCatWrangler` : 'Sign in · IceCatWrangler';
  }, [route, key]);
  const api = useMemo(
    () =>
      key
        ? createApi(key, () => {
            signOut();
            setKey(null);
            setNotice('The API refused the key. Sign in again.');
          })
        : null,
    [key],
  );

  if (!key || !api) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(k) => {
          saveKey(k);
          setNotice(null);
          setKey(k);
        }}
      />
    );
  }

  const leave = () => {
    signOut();
    setKey(null);
    setNotice('Signed out.');
    location.hash = href.batches();
  };

  return (
    <>
      <a class="skip" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href.batches()}>
          IceCatWrangler
        </a>
        <nav aria-label="Main">
          <a href={href.batches()} aria-current={route.view === 'batches' ? 'page' : undefined}>
            Batches
          </a>
          <a href={href.newBatch()} aria-current={route.view === 'new' ? 'page' : undefined}>
            New batch
          </a>
          <button type="button" class="link" onClick={leave}>
            Sign out
          </button>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {route.view === 'batches' && <BatchList api={api} />}
        {route.view === 'new' && <NewBatch api={api} />}
        {route.view === 'batch' && <BatchView key={route.batchId} api={api} batchId={route.batchId} filter={route.filter} />}
        {route.view === 'image' && (
          <ImageView key={`${route.batchId}/${route.fprint}`} api={api} batchId={route.batchId} fprint={route.fprint} />
        )}
        {route.view === 'logs' && <LogsView key={route.batchId} api={api} batchId={route.batchId} />}
        {route.view === 'review' && <ReviewView key={route.batchId} api={api} batchId={route.batchId} />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
