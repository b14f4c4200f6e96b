// A new batch from the browser: files dropped or chosen, the estimate of what they cost, then the batch created and
// its files uploaded with their forms, each with its progress. Its parts are in new-batch/.
import { useRef, useState } from 'preact/hooks';
import { type Api, ApiRequestError } from '../api';
import { plural } from '../format';
import { useCapabilities } from '../hooks';
import { href } from '../route';
import { imageType, type PickedFile } from '../upload';
import { ErrorNote } from './common';
import { EstimateNote, useEstimate } from './new-batch/estimate';
import { FilePicker } from './new-batch/file-picker';
import { UploadForm } from './new-batch/upload-form';
import { UploadList } from './new-batch/upload-list';
import { type FileState, uploadBatch } from './new-batch/upload-run';

/** Progress events come far more often than frames: render at most once a frame. */
function useRepaint(): () => void {
  const [, setTick] = useState(0);
  const frame = useRef(0);
  return () => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      setTick((t) => t + 1);
    });
  };
}

/** The files picked so far (images only, each name once) and those skipped as not an image or empty. */
function usePickedFiles() {
  const [files, setFiles] = useState<PickedFile[]>([]);
  const [skipped, setSkipped] = useState<string[]>([]);
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
  };
  const clear = () => (setFiles([]), setSkipped([]));
  return { files, skipped, add, clear };
}

export function NewBatch({ api }: { api: Api }) {
  const { files, skipped, add, clear } = usePickedFiles();
  const [batchName, setBatchName] = useState('');
  const [debug, setDebug] = useState(false);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<string | null>(null);
  const progress = useRef<FileState[]>([]);
  const repaint = useRepaint();
  const caps = useCapabilities();
  const estimate = useEstimate(api, files);

  const onPicked = (picked: { name: string; file: File }[]) => {
    add(picked);
    setResult(null);
    setError(null);
  };

  const upload = async () => {
    setRunning(true);
    setError(null);
    setResult(null);
    progress.current = files.map(() => ({ sent: 0, state: 'waiting' }));
    try {
      const named = caps?.namesBatches ? batchName.trim() : '';
      const { batchId, uploaded } = await uploadBatch({ api, caps, batchName: named, debug, files, progress: progress.current, repaint });
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

  return (
    <section aria-labelledby="new-title">
      <h1 id="new-title">New batch</h1>
      <FilePicker running={running} onPicked={onPicked} onError={setError} />
      <UploadForm
        namesBatches={caps?.namesBatches ?? false}
        batchName={batchName}
        onBatchName={setBatchName}
        debug={debug}
        onDebug={setDebug}
        running={running}
        fileCount={files.length}
        onUpload={() => void upload()}
        onClear={() => (clear(), (progress.current = []))}
      />
      {estimate && !running && !result && <EstimateNote estimate={estimate} />}
      <ErrorNote error={error} />
      {result && (
        <p role="status" class="notice">
          {result}
        </p>
      )}
      {skipped.length > 0 && <p class="muted">Skipped (not an image, or empty): {skipped.join(', ')}</p>}
      {files.length > 0 && <UploadList files={files} progress={progress.current} />}
    </section>
  );
}
