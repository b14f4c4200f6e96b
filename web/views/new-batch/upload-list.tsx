import { plural } from '../../format';
import type { PickedFile } from '../../upload';
import { FileName } from '../common';
import type { FileState } from './upload-run';

/** The files chosen: all of them uploaded so far, then each with its own progress and state. */
export function UploadList({ files, progress }: { files: PickedFile[]; progress: FileState[] }) {
  const totalBytes = files.reduce((n, f) => n + f.file.size, 0);
  const sentBytes = progress.reduce((n, p) => n + p.sent, 0);
  return (
    <>
      <div class="progress">
        <progress max={Math.max(totalBytes, 1)} value={sentBytes} aria-label="All files uploaded" />
        <span class="progress-text">
          {Math.round((sentBytes / Math.max(totalBytes, 1)) * 100)}% of {plural(files.length, 'file')}
        </span>
      </div>
      <ul class="upload-list">
        {files.map((f, i) => {
          const p = progress[i];
          return (
            <li key={f.name} data-state={p?.state ?? 'waiting'}>
              <span class="upload-name">
                <FileName name={f.name} />
              </span>
              <progress max={Math.max(f.file.size, 1)} value={p?.sent ?? 0} aria-label={`${f.name} uploaded`} />
              <span class="upload-state">
                {p ? (p.state === 'failed' ? `failed: ${p.error}` : p.state) : `${Math.ceil(f.file.size / 1024)} KB`}
              </span>
            </li>
          );
        })}
      </ul>
    </>
  );
}
