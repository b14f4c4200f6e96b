// One file through its presigned POST form (multipart/form-data: the form's fields, then the file), as a browser
// would send it. The file is a Blob backed by the file on disk (fs.openAsBlob), so fetch streams it with a known
// Content-Length and never holds its bytes.
import { openAsBlob } from 'node:fs';
import { TransientError, describeNetworkError, isTransientStatus, retryAfterMs } from './retry';
import type { UploadForm } from './types';

/** S3 refused the upload for good (policy, expiry, size): the file is not in the batch. */
export class UploadRefusedError extends Error {
  override name = 'UploadRefusedError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** S3's XML error, or the bare status (pure). */
export function s3Error(status: number, body: string): { code: string; message: string } {
  const code = /<Code>([^<]*)<\/Code>/.exec(body)?.[1];
  const message = /<Message>([^<]*)<\/Message>/.exec(body)?.[1];
  return { code: code ?? `HTTP${status}`, message: message ?? `S3 answered HTTP ${status}` };
}

export interface FormUploadOptions {
  timeoutMs?: number;
}

/** Posts the file once; TransientError for what a retry may cure, UploadRefusedError for what it cannot. */
export async function postForm(form: UploadForm, filePath: string, contentType: string, options: FormUploadOptions = {}): Promise<void> {
  const file = await openAsBlob(filePath, { type: contentType });
  const data = new FormData();
  for (const [name, value] of Object.entries(form.fields)) data.append(name, value);
  data.append('file', file as Blob, form.file.split('/').pop());
  let res: Response;
  try {
    res = await fetch(form.url, { method: 'POST', body: data, signal: AbortSignal.timeout(options.timeoutMs ?? 300_000) });
  } catch (err) {
    // A file changed or removed after the walk cannot be read: no retry brings it back.
    const name = (err as { cause?: { name?: string } }).cause?.name;
    if (name === 'NotReadableError' || name === 'NotFoundError') {
      throw new UploadRefusedError(0, 'FileChanged', 'the file changed or disappeared while uploading');
    }
    throw new TransientError(`upload: ${describeNetworkError(err)}`, undefined, { cause: err });
  }
  const body = await res.text();
  if (res.ok) return;
  const error = s3Error(res.status, body);
  if (isTransientStatus(res.status)) {
    throw new TransientError(`upload: ${res.status} ${error.code}: ${error.message}`, retryAfterMs(res.headers.get('retry-after')));
  }
  throw new UploadRefusedError(res.status, error.code, error.message);
}
