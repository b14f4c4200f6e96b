// What a reader can do to the batch they look at, as far as the API serves it: close it (a folder uploaded with the
// AWS CLI stays open until someone says it is complete), move its cat threshold once done, erase it.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type Api, type BatchSummary, batchPath, type Reclassified } from '../api';
import { plural } from '../format';
import { useCapabilities } from '../hooks';
import { ErrorNote } from './common';

interface Props {
  api: Api;
  batch: BatchSummary;
  /** A summary the API answered an action with; `regrid`: the images' outcomes changed, read them again. */
  onSummary: (summary: BatchSummary, regrid: boolean) => void;
  /** The batch is being erased: it answers 404 from now on. */
  onErased: () => void;
}

/** POST …:reclassify to the end: a batch larger than one request handles comes back with a cursor, and the same threshold goes on from there. */
export async function reclassifyAll(api: Api, batchId: string, threshold: number): Promise<BatchSummary> {
  let page: Reclassified | undefined;
  do {
    page = await api.post<Reclassified>(`${batchPath(batchId)}:reclassify`, {
      catMinConfidence: threshold,
      ...(page?.cursor ? { cursor: page.cursor } : {}),
    });
  } while (page.cursor);
  return page.batch;
}

/** Runs one action at a time; its error (the API's message) and its outcome are shown beside the actions. */
function useAction() {
  const [busy, setBusy] = useState<string | null>(null);
  const [failed, setFailed] = useState<{ action: string; error: unknown } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  /** Whether the action succeeded. */
  const run = async (name: string, action: () => Promise<string | null>): Promise<boolean> => {
    setBusy(name);
    setFailed(null);
    setDone(null);
    try {
      setDone(await action());
      return true;
    } catch (error) {
      setFailed({ action: name, error });
      return false;
    } finally {
      setBusy(null);
    }
  };
  return { busy, failed, done, run };
}

function CloseBatch({ batchId, busy, onClose }: { batchId: string; busy: boolean; onClose: () => void }) {
  return (
    <div class="action action-main">
      <button type="button" disabled={busy} aria-describedby="close-hint" onClick={onClose}>
        {busy ? 'Closing…' : 'Close batch'}
      </button>
      <p id="close-hint" class="hint">
        Closing says every file of {batchId} has arrived: uploads into it are refused from then on, and it is done once the files it has are
        classified.
      </p>
    </div>
  );
}

function CatThreshold({ current, busy, onApply }: { current: number | null; busy: boolean; onApply: (threshold: number) => void }) {
  const [value, setValue] = useState(current === null ? '' : String(current));
  useEffect(() => setValue(current === null ? '' : String(current)), [current]);
  return (
    <form
      class="action action-main threshold"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(Number(value));
      }}
    >
      <label for="cat-threshold">Cat threshold (%)</label>
      <div class="threshold-row">
        <input
          id="cat-threshold"
          type="number"
          min={0}
          max={100}
          step="any"
          required
          value={value}
          placeholder={current === null ? 'default' : undefined}
          aria-describedby="threshold-hint"
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Applying…' : 'Apply'}
        </button>
      </div>
      <p id="threshold-hint" class="hint">
        An image is a cat when its cat confidence is at least this.
        {current === null ? ' Now: the deployment’s default.' : ''} Applying it re-reads the stored confidences: nothing is sent to
        Rekognition again.
      </p>
    </form>
  );
}

/** Erasure behind a modal confirmation: Cancel has the focus, Escape cancels, the focus returns to the button. */
function DeleteBatch({
  batch,
  busy,
  error,
  onDelete,
}: {
  batch: BatchSummary;
  busy: boolean;
  error: unknown;
  onDelete: () => Promise<boolean>;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const ask = () => {
    dialog.current?.showModal();
    cancel.current?.focus();
  };
  const erase = async () => {
    if (await onDelete()) dialog.current?.close();
  };
  return (
    <div class="action action-delete">
      <button ref={opener} type="button" class="danger outline" aria-haspopup="dialog" onClick={ask}>
        Delete batch…
      </button>
      <dialog
        ref={dialog}
        class="confirm"
        aria-labelledby="delete-title"
        aria-describedby="delete-what"
        onClose={() => opener.current?.focus()}
      >
        <h2 id="delete-title">Delete batch {batch.batchId}?</h2>
        <p id="delete-what">
          This erases its {plural(batch.counts.total, 'file')}, their thumbnails, records and logs. It cannot be undone.
        </p>
        <div class="buttons">
          <button ref={cancel} type="button" class="secondary" disabled={busy} onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="button" class="danger" disabled={busy} onClick={erase}>
            {busy ? 'Deleting…' : 'Delete'}
          </button>
        </div>
        <ErrorNote error={error} />
      </dialog>
    </div>
  );
}

export function BatchActions({ api, batch, onSummary, onErased }: Props) {
  const caps = useCapabilities();
  const { busy, failed, done, run } = useAction();
  // Read once per batch: the panel stays as the user left it while the batch's status moves on.
  // An import closes itself once its source is listed: nothing for the reader to close.
  const openAtFirst = useMemo(() => batch.status === 'open' && !batch.import, [batch.batchId]);
  const path = batchPath(batch.batchId);
  const canClose = batch.status === 'open' && !batch.import && (caps?.serves('POST', `${path}:close`) ?? false);
  const canReclassify = batch.status === 'done' && (caps?.serves('POST', `${path}:reclassify`) ?? false);
  const canDelete = caps?.serves('DELETE', path) ?? false;
  if (!canClose && !canReclassify && !canDelete) return null;

  const close = () =>
    run('close', async () => {
      onSummary(await api.post<BatchSummary>(`${path}:close`), false);
      return 'Closed: no more uploads are accepted.';
    });

  const reclassify = (threshold: number) =>
    run('reclassify', async () => {
      const summary = await reclassifyAll(api, batch.batchId, threshold);
      onSummary(summary, true);
      return `Cat threshold ${threshold}%: ${plural(summary.counts.cats, 'cat')}.`;
    });

  const erase = async () => {
    const erased = await run('delete', async () => {
      await api.del(path);
      return null;
    });
    if (erased) onErased();
    return erased;
  };

  return (
    <section class="actions" aria-labelledby="actions-title">
      <h2 id="actions-title" class="visually-hidden">
        Actions
      </h2>
      {/* Folded, so the gallery comes first on a phone; open at first while the batch is open, where closing it is the
          next step. Keyed by batch: another batch starts folded or open by its own status. */}
      <details key={batch.batchId} open={openAtFirst}>
        <summary>Manage batch</summary>
        <div class="actions-body">
          {canClose && <CloseBatch batchId={batch.batchId} busy={busy === 'close'} onClose={close} />}
          {canReclassify && <CatThreshold current={batch.catMinConfidence ?? null} busy={busy === 'reclassify'} onApply={reclassify} />}
          {canDelete && (
            <DeleteBatch
              batch={batch}
              busy={busy === 'delete'}
              error={failed?.action === 'delete' ? failed.error : null}
              onDelete={erase}
            />
          )}
        </div>
      </details>
      <div class="action-outcome">
        {failed?.action !== 'delete' && <ErrorNote error={failed?.error} />}
        {done && (
          <p role="status" class="muted">
            {done}
          </p>
        )}
      </div>
    </section>
  );
}
