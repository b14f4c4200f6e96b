// A presigned POST upload, shared by the integration and browser tests: it imports nothing that starts servers, so the
// browser tests (compiled with the DOM library) can use it too.
import type { UploadForm } from '../../lib/api/schemas/batches';

/** Uploads through a presigned POST form as a browser would: the form's fields, then the file. Answers S3's status. */
export async function postForm(form: UploadForm, body: Buffer, contentType: string): Promise<number> {
  const data = new FormData();
  for (const [name, value] of Object.entries(form.fields)) data.append(name, value);
  data.append('file', new Blob([new Uint8Array(body)], { type: contentType }), form.file);
  const res = await fetch(form.url, { method: 'POST', body: data });
  await res.arrayBuffer();
  return res.status;
}
