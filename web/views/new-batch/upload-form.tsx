import { plural } from '../../format';

interface UploadFormProps {
  /** The API takes a batch name. */
  namesBatches: boolean;
  batchName: string;
  onBatchName: (name: string) => void;
  debug: boolean;
  onDebug: (debug: boolean) => void;
  running: boolean;
  fileCount: number;
  onUpload: () => void;
  onClear: () => void;
}

/** The batch's name and debug logs, the upload button, and the way to clear the files chosen. */
export function UploadForm({
  namesBatches,
  batchName,
  onBatchName,
  debug,
  onDebug,
  running,
  fileCount,
  onUpload,
  onClear,
}: UploadFormProps) {
  return (
    <form
      class="upload-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!running && fileCount > 0) onUpload();
      }}
    >
      {namesBatches && (
        <>
          <label for="batch-name">Batch name (optional)</label>
          <input
            id="batch-name"
            value={batchName}
            pattern="[A-Za-z0-9_\-]{1,64}"
            title="1 to 64 letters, digits, - or _"
            disabled={running}
            onInput={(e) => onBatchName((e.target as HTMLInputElement).value)}
          />
        </>
      )}
      <label class="check">
        <input type="checkbox" checked={debug} disabled={running} onChange={(e) => onDebug((e.target as HTMLInputElement).checked)} /> Keep
        debug logs
      </label>
      <button type="submit" disabled={running || fileCount === 0}>
        {running ? 'Uploading…' : fileCount > 0 ? `Upload ${plural(fileCount, 'image')}` : 'Upload'}
      </button>
      {fileCount > 0 && !running && (
        <button type="button" class="link" onClick={onClear}>
          Clear
        </button>
      )}
    </form>
  );
}
