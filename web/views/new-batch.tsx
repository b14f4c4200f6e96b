import { useEffect, useRef, useState } from 'preact/hooks';
import { FormBook } from '../../lib/api/form-book';
import { ApiRequestError, batchPath, isNotFound, type Api, type CreatedBatch, type MoreUploads } from '../api';
import { exactCopies, sha256Of, uploadEstimate, type UploadEstimate } from '../estimate';
import { plural } from '../format';
import { useCapabilities } from '../hooks';
import { href } from '../route';
import { rememberBatch } from '../session';
import { loadUsage } from '../usage';
import { UploadError, chosenFiles, droppedFiles, eachLimited, imageType, postForm, type PickedFile } from '../upload';
import { ErrorNote, FileName, dollars } from './common';

type FileState = { sent: number; state: 'waiting' | 'uploading' | 'done' | 'failed'; error?: string };

/** Files one POST /v1/batches declares (the API's default cap); the rest go through POST …/uploads. */
const FILES_PER_REQUEST = 500;
const PARALLEL_UPLOADS = 4;
const ATTEMPTS = 3;

const declare = (chunk: PickedFile[]) => chunk.map((f) => ({ name: f.name, contentType: f.contentType, size: f.file.size }));

/**
 * Creates the batch with every file declared; their forms, held in a book that renews them (POST …/uploads with
 * renew) when they expired or are about to, since the last files may start long after the forms were handed out.
 */
async function formsFor(api: Api, batchName: string, debug: boolean, files: PickedFile[]): Promise<{ batchId: string; forms: FormBook<PickedFile> }> {
  const body = { ...(debug ? { debug: true } : {}), files: declare(files.slice(0, FILES_PER_REQUEST)) };
  const askedAt = Date.now();
  const created = await api.post<CreatedBatch>('/v1/batches', batchName ? { batchId: batchName, ...body } : body);
  const renew = (chunk: PickedFile[]) => api.post<MoreUploads>(`${batchPath(created.batchId)}/uploads`, { files: declare(chunk), renew: true });
  const forms = new FormBook<PickedFile>(renew, Date.now, FILES_PER_REQUEST);
  forms.add(files.slice(0, FILES_PER_REQUEST), created, askedAt);
  for (let i = FILES_PER_REQUEST; i < files.length; i += FILES_PER_REQUEST) {
    const chunk = files.slice(i, i + FILES_PER_REQUEST);
    const at = Date.now();
    forms.add(chunk, await api.post<MoreUploads>(`${batchPath(created.batchId)}/uploads`, { files: declare(chunk) }), at);
  }
  return { batchId: created.batchId, forms };
}

export function NewBatch({ api }: { api: Api }) {
  const [files, setFiles] = useState<PickedFile[]>([]);
  const [skipped, setSkipped] = useState<string[]>([]);
  const [batchName, setBatchName] = useState('');
  const [debug, setDebug] = useState(false);
  const [running, setRunning] = useState(false);
  const [over, setOver] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<string | null>(null);
  const progress = useRef<FileState[]>([]);
  const [, setTick] = useState(0);
  const frame = useRef(0);
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const caps = useCapabilities();
  const estimate = useEstimate(api, files);

  // Progress events come far more often than frames: render at most once a frame.
  const repaint = () => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      setTick((t) => t + 1);
    });
  };

  const add = (picked: { name: string; file: File }[]) => {
    const images: PickedFile[] = [];
    const rejected: string[] = [];
    const names = new Set(files.map((f) => f.name));
    for (const p of picked) {
      const contentType = imageType(p.file);
      if (!contentType || p.file.size === 0) rejected.push(p.name);
      else if (!names.has(p.name)) {
        names.add(p.name);
        images.push({ ...p, contentType });
      }
    }
    setFiles((old) => [...old, ...images]);
    setSkipped((old) => [...old, ...rejected]);
    setResult(null);
    setError(null);
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    if (running || !e.dataTransfer) return;
    droppedFiles(e.dataTransfer).then(add, setError);
  };

  const upload = async () => {
    setRunning(true);
    setError(null);
    setResult(null);
    progress.current = files.map(() => ({ sent: 0, state: 'waiting' }));
    try {
      const { batchId, forms } = await formsFor(api, caps?.namesBatches ? batchName.trim() : '', debug, files);
      rememberBatch(batchId);
      let uploaded = 0;
      await eachLimited(files, PARALLEL_UPLOADS, async (file, i) => {
        const state = progress.current[i] as FileState;
        let renew = false;
        for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
          state.state = 'uploading';
          try {
            // The form is renewed here if it is due (a retry after a network error included: an expired form's 403
            // may reach the page as one, when the bucket's error answer carries no CORS headers).
            await postForm(await forms.take(file.name, renew), file, (sent) => {
              state.sent = sent;
              repaint();
            });
            state.state = 'done';
            state.sent = file.file.size;
            uploaded++;
            break;
          } catch (err) {
            state.state = 'failed';
            state.error = (err as Error).message;
            // An expired form is renewed once; any other refusal by S3 (4xx) would be refused again; network faults
            // and 5xx are retried.
            renew = err instanceof UploadError && err.expired && !renew;
            if (!renew && /S3 answered 4/.test(state.error)) break;
          } finally {
            repaint();
          }
        }
        forms.drop(file.name);
      });
      // No more uploads: the batch is done once these are processed. An API without :close closes the batch when the
      // declared files have all arrived.
      if (caps?.serves('POST', `${batchPath(batchId)}:close`)) {
        try {
          await api.post(`${batchPath(batchId)}:close`, { expected: uploaded });
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      const failed = files.length - uploaded;
      setResult(failed === 0 ? `Uploaded ${plural(uploaded, 'file')} into ${batchId}.` : `Uploaded ${uploaded}; ${failed} failed.`);
      if (failed === 0) location.hash = href.batch(batchId);
    } catch (err) {
      setError(err instanceof ApiRequestError ? new Error(`The API refused the batch: ${err.message}`) : err);
    } finally {
      setRunning(false);
      repaint();
    }
  };

  const totalBytes = files.reduce((n, f) => n + f.file.size, 0);
  const sentBytes = progress.current.reduce((n, p) => n + p.sent, 0);

  return (
    <section aria-labelledby="new-title">
      <h1 id="new-title">New batch</h1>
      <div
        class={`dropzone${over ? ' over' : ''}`}
        data-testid="dropzone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <p>Drop images or a folder of images here, or</p>
        <div class="buttons">
          <button type="button" disabled={running} onClick={() => fileInput.current?.click()}>
            Choose images
          </button>
          <button type="button" disabled={running} onClick={() => folderInput.current?.click()}>
            Choose a folder
          </button>
        </div>
        <input
          ref={fileInput}
          id="file-input"
          class="visually-hidden"
          type="file"
          multiple
          accept="image/*"
          tabIndex={-1}
          aria-label="Images to upload"
          onChange={(e) => {
            const input = e.target as HTMLInputElement;
            if (input.files) add(chosenFiles(input.files));
            input.value = '';
          }}
        />
        <input
          ref={folderInput}
          class="visually-hidden"
          type="file"
          tabIndex={-1}
          aria-label="A folder to upload"
          {...{ webkitdirectory: true }}
          onChange={(e) => {
            const input = e.target as HTMLInputElement;
            if (input.files) add(chosenFiles(input.files));
            input.value = '';
          }}
        />
      </div>
      <form
        class="upload-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!running && files.length > 0) void upload();
        }}
      >
        {caps?.namesBatches && (
          <>
            <label for="batch-name">Batch name (optional)</label>
            <input
              id="batch-name"
              value={batchName}
              pattern="[A-Za-z0-9_\-]{1,64}"
              title="1 to 64 letters, digits, - or _"
              disabled={running}
              onInput={(e) => setBatchName((e.target as HTMLInputElement).value)}
            />
          </>
        )}
        <label class="check">
          <input type="checkbox" checked={debug} disabled={running} onChange={(e) => setDebug((e.target as HTMLInputElement).checked)} /> Keep
          debug logs
        </label>
        <button type="submit" disabled={running || files.length === 0}>
          {running ? 'Uploading…' : files.length > 0 ? `Upload ${plural(files.length, 'image')}` : 'Upload'}
        </button>
        {files.length > 0 && !running && (
          <button type="button" class="link" onClick={() => (setFiles([]), setSkipped([]), (progress.current = []))}>
            Clear
          </button>
        )}
      </form>
      {estimate && !running && !result && <EstimateNote estimate={estimate} />}
      <ErrorNote error={error} />
      {result && (
        <p role="status" class="notice">
          {result}
        </p>
      )}
      {skipped.length > 0 && <p class="muted">Skipped (not an image, or empty): {skipped.join(', ')}</p>}
      {files.length > 0 && (
        <>
          <div class="progress">
            <progress max={Math.max(totalBytes, 1)} value={sentBytes} aria-label="All files uploaded" />
            <span class="progress-text">
              {Math.round((sentBytes / Math.max(totalBytes, 1)) * 100)}% of {plural(files.length, 'file')}
            </span>
          </div>
          <ul class="upload-list">
            {files.map((f, i) => {
              const p = progress.current[i];
              return (
                <li key={f.name} data-state={p?.state ?? 'waiting'}>
                  <span class="upload-name">
                    <FileName name={f.name} />
                  </span>
                  <progress max={Math.max(f.file.size, 1)} value={p?.sent ?? 0} aria-label={`${f.name} uploaded`} />
                  <span class="upload-state">{p ? (p.state === 'failed' ? `failed: ${p.error}` : p.state) : `${Math.ceil(f.file.size / 1024)} KB`}</span>
                </li>
              );
            })}
          </ul>
        </>
      )}
    </section>
  );
}

/**
 * The estimate of uploading the chosen files, worked out again whenever they change: exact copies found by hashing
 * the files of equal size, the price and the day's quota left from GET /v1/usage (once). Null before any file.
 */
function useEstimate(api: Api, files: PickedFile[]): UploadEstimate | null {
  const [estimate, setEstimate] = useState<UploadEstimate | null>(null);
  const usage = useRef<ReturnType<typeof loadUsage> | null>(null);
  /** Each file is read and hashed once, however often the choice changes around it. */
  const digests = useRef(new WeakMap<File, Promise<string>>());
  const digestOf = (file: File): Promise<string> => {
    let digest = digests.current.get(file);
    if (!digest) digests.current.set(file, (digest = sha256Of(file)));
    return digest;
  };
  useEffect(() => {
    if (files.length === 0) {
      setEstimate(null);
      return;
    }
    let live = true;
    usage.current ??= loadUsage(api).catch(() => null);
    void (async () => {
      const [copies, known] = await Promise.all([exactCopies(files.map((f) => f.file), digestOf).catch(() => 0), usage.current]);
      if (live) setEstimate(uploadEstimate(files.length, copies, known?.pricePerImageUsd, known?.images.remaining));
    })();
    return () => {
      live = false;
    };
  }, [api, files]);
  return estimate;
}

/** Before the upload: the most it can cost, what is not charged, and whether today's quota takes it all. */
function EstimateNote({ estimate: e }: { estimate: UploadEstimate }) {
  return (
    <div class="estimate" data-estimate="">
      <p>
        <strong>Before you upload:</strong> at most {plural(e.atMostCalls, 'DetectLabels call')}
        {e.atMostUsd !== undefined && <>, about {dollars(e.atMostUsd)}</>}
        {e.copies > 0 && <> ({plural(e.copies, 'exact copy', 'exact copies')} among the files, not charged)</>}. Images you have
        uploaded before cost nothing again; <code>icecat upload --dry-run</code> counts them exactly.
      </p>
      {e.remainingToday !== undefined && e.remainingToday < e.files && (
        <p class="estimate-quota">
          {e.remainingToday === 0
            ? `Today's quota is used up: ${e.files === 1 ? 'this upload' : `these ${e.files} uploads`} will fail as QuotaExceeded until 00:00 UTC.`
            : `Today's quota takes ${plural(e.remainingToday, 'more upload')}: the other ${e.files - e.remainingToday} will fail as QuotaExceeded until 00:00 UTC.`}
        </p>
      )}
    </div>
  );
}
