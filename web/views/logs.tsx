import { useEffect, useMemo, useState } from 'preact/hooks';
import { type Api, batchPath, type LogEntry, type Page } from '../api';
import { when } from '../format';
import { href } from '../route';
import { ErrorNote, FileName } from './common';

/** A debug batch's logs (GET …/logs), by time, narrowed to one image if the reader picks one. */
export function LogsView({ api, batchId }: { api: Api; batchId: string }) {
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [only, setOnly] = useState('');

  const load = async (from?: string) => {
    try {
      const page = await api.get<Page<LogEntry>>(`${batchPath(batchId)}/logs`, { limit: 100, cursor: from });
      setEntries((old) => [...old, ...page.items]);
      setCursor(page.cursor);
      setLoaded(true);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => {
    void load();
  }, [api, batchId]);

  const images = useMemo(() => [...new Map(entries.map((e) => [e.fprint, e.fileName ?? e.fprint])).entries()], [entries]);
  const shown = useMemo(
    () => entries.filter((e) => !only || e.fprint === only).sort((a, b) => (a.loggedAt ?? '').localeCompare(b.loggedAt ?? '')),
    [entries, only],
  );

  return (
    <section aria-labelledby="logs-title">
      <p class="crumbs">
        <a href={href.batches()}>Batches</a> / <a href={href.batch(batchId)}>{batchId}</a> /
      </p>
      <h1 id="logs-title">Logs</h1>
      <ErrorNote error={error} />
      {loaded && entries.length === 0 && <p class="muted">No logs: the batch was not created with debug on, or nothing ran yet.</p>}
      {entries.length > 0 && (
        <div class="inline-form">
          <label for="log-image">Image</label>
          <select id="log-image" value={only} onChange={(e) => setOnly((e.target as HTMLSelectElement).value)}>
            <option value="">All images</option>
            {images.map(([fprint, name]) => (
              <option key={fprint} value={fprint}>
                {name}
              </option>
            ))}
          </select>
        </div>
      )}
      <ol class="logs">
        {shown.map((e) => (
          <li key={`${e.fprint}/${e.loggedAt}`} class="log-entry">
            <p class="log-head">
              <time dateTime={e.loggedAt ?? undefined}>{when(e.loggedAt)}</time> ·{' '}
              <a href={href.image(batchId, e.fprint)}>
                <FileName name={e.fileName ?? e.fprint} />
              </a>
              {e.status ? ` · ${e.status}` : ''}
            </p>
            <pre tabIndex={0}>{e.lines.join('\n')}</pre>
          </li>
        ))}
      </ol>
      {cursor && (
        <button type="button" onClick={() => load(cursor)}>
          Show more logs
        </button>
      )}
    </section>
  );
}
