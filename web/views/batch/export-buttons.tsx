import { useState } from 'preact/hooks';
import { type Api, batchPath, isNotFound } from '../../api';

/** A Blob saved as a download named `name`. */
export function saveBlob(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The batch exported as CSV, JSON Lines or a MegaDetector results file, saved as a download. */
export function ExportButtons({ api, batchId }: { api: Api; batchId: string }) {
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const download = async (format: 'csv' | 'jsonl' | 'megadetector') => {
    setBusy(true);
    setMessage(null);
    // The MegaDetector results file is JSON: Timelapse and AddaxAI open a .json.
    const name = `${batchId}.${format === 'megadetector' ? 'json' : format}`;
    try {
      saveBlob(await api.blob(`${batchPath(batchId)}/export`, { format }), name);
      setMessage(`Saved ${name}.`);
    } catch (error) {
      setMessage(isNotFound(error) ? 'This API has no export yet.' : `Export failed: ${(error as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="exports" role="group" aria-label="Export">
      <button type="button" disabled={busy} onClick={() => download('csv')}>
        Export CSV
      </button>
      <button type="button" disabled={busy} onClick={() => download('jsonl')}>
        Export JSONL
      </button>
      <button
        type="button"
        disabled={busy}
        onClick={() => download('megadetector')}
        title="MegaDetector results file (format 1.6) for Timelapse or AddaxAI"
      >
        Export MegaDetector
      </button>
      {message && (
        <span role="status" class="muted">
          {message}
        </span>
      )}
    </div>
  );
}
