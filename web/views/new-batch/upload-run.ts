import type { FormBook } from '../../../lib/api/form-book';
import { type Api, batchPath, isNotFound } from '../../api';
import type { Capabilities } from '../../capabilities';
import { rememberBatch } from '../../session';
import { eachLimited, type PickedFile, postFormWithProgress, UploadError } from '../../upload';
import { formsFor } from './forms';

/** One file's upload as the list shows it. */
export type FileState = { sent: number; state: 'waiting' | 'uploading' | 'done' | 'failed'; error?: string };

const PARALLEL_UPLOADS = 4;
const ATTEMPTS = 3;

/** One file posted with its form, up to ATTEMPTS times; true once it is uploaded. */
async function uploadOne(forms: FormBook<PickedFile>, file: PickedFile, state: FileState, repaint: () => void): Promise<boolean> {
  let renew = false;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    state.state = 'uploading';
    try {
      // The form is renewed here if it is due (a retry after a network error included: an expired form's 403
      // may reach the page as one, when the bucket's error answer carries no CORS headers).
      await postFormWithProgress(await forms.take(file.name, renew), file, (sent) => {
        state.sent = sent;
        repaint();
      });
      state.state = 'done';
      state.sent = file.file.size;
      return true;
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
  return false;
}

interface BatchUpload {
  api: Api;
  caps: Capabilities | null;
  batchName: string;
  debug: boolean;
  files: PickedFile[];
  /** Each file's state, in the order of `files`, updated as it goes. */
  progress: FileState[];
  repaint: () => void;
}

/** Creates the batch, uploads its files a few at a time, then closes it; the batch's id and how many files arrived. */
export async function uploadBatch({
  api,
  caps,
  batchName,
  debug,
  files,
  progress,
  repaint,
}: BatchUpload): Promise<{ batchId: string; uploaded: number }> {
  const { batchId, forms } = await formsFor(api, batchName, debug, files);
  rememberBatch(batchId);
  let uploaded = 0;
  await eachLimited(files, PARALLEL_UPLOADS, async (file, i) => {
    if (await uploadOne(forms, file, progress[i] as FileState, repaint)) uploaded++;
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
  return { batchId, uploaded };
}
