// Hash routes, so the API serves one page for every view: #/, #/new, #/batches/{id}[?filter=], #/batches/{id}/logs,
// #/batches/{id}/images/{fprint}, #/batches/{id}/review.
import { useEffect, useState } from 'preact/hooks';
import { onPageChange } from './focus';

export type HashRoute =
  | { view: 'batches' }
  | { view: 'new' }
  | { view: 'batch'; batchId: string; filter: string }
  | { view: 'logs'; batchId: string }
  | { view: 'review'; batchId: string }
  | { view: 'image'; batchId: string; fprint: string };

function parseRoute(hash: string): HashRoute {
  const [path = '', query = ''] = hash.replace(/^#/, '').split('?');
  const parts = path
    .split('/')
    .filter(Boolean)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  if (parts[0] === 'new') return { view: 'new' };
  if (parts[0] === 'batches' && parts[1]) {
    const batchId = parts[1];
    if (parts[2] === 'logs') return { view: 'logs', batchId };
    if (parts[2] === 'review') return { view: 'review', batchId };
    if (parts[2] === 'images' && parts[3]) return { view: 'image', batchId, fprint: parts[3] };
    return { view: 'batch', batchId, filter: new URLSearchParams(query).get('filter') ?? 'all' };
  }
  return { view: 'batches' };
}

const enc = encodeURIComponent;
export const href = {
  batches: () => '#/',
  newBatch: () => '#/new',
  batch: (batchId: string, filter = 'all') => `#/batches/${enc(batchId)}${filter === 'all' ? '' : `?filter=${enc(filter)}`}`,
  logs: (batchId: string) => `#/batches/${enc(batchId)}/logs`,
  review: (batchId: string) => `#/batches/${enc(batchId)}/review`,
  image: (batchId: string, fprint: string) => `#/batches/${enc(batchId)}/images/${enc(fprint)}`,
};

export function useRoute(): HashRoute {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    if ('scrollRestoration' in history) history.scrollRestoration = 'manual';
    let at = location.hash;
    const onChange = () => {
      // Only a route (#/…, or none) is one: a fragment such as #main changes no page.
      if (location.hash && !location.hash.startsWith('#/')) return;
      onPageChange(at, location.hash);
      at = location.hash;
      setRoute(parseRoute(location.hash));
    };
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
