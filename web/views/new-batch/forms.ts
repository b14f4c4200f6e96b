import { FormBook } from '../../../lib/api/form-book';
import { type Api, batchPath, type CreatedBatch, type MoreUploads } from '../../api';
import type { PickedFile } from '../../upload';

/** Files one POST /v1/batches declares (the API's default cap); the rest go through POST …/uploads. */
const FILES_PER_REQUEST = 500;

const declare = (chunk: PickedFile[]) => chunk.map((f) => ({ name: f.name, contentType: f.contentType, size: f.file.size }));

/**
 * Creates the batch with every file declared; their forms, held in a book that renews them (POST …/uploads with
 * renew) when they expired or are about to, since the last files may start long after the forms were handed out.
 */
export async function formsFor(
  api: Api,
  batchName: string,
  debug: boolean,
  files: PickedFile[],
): Promise<{ batchId: string; forms: FormBook<PickedFile> }> {
  const body = { ...(debug ? { debug: true } : {}), files: declare(files.slice(0, FILES_PER_REQUEST)) };
  const askedAt = Date.now();
  const created = await api.post<CreatedBatch>('/v1/batches', batchName ? { batchId: batchName, ...body } : body);
  const renew = (chunk: PickedFile[]) =>
    api.post<MoreUploads>(`${batchPath(created.batchId)}/uploads`, { files: declare(chunk), renew: true });
  const forms = new FormBook<PickedFile>(renew, Date.now, FILES_PER_REQUEST);
  forms.add(files.slice(0, FILES_PER_REQUEST), created, askedAt);
  for (let i = FILES_PER_REQUEST; i < files.length; i += FILES_PER_REQUEST) {
    const chunk = files.slice(i, i + FILES_PER_REQUEST);
    const at = Date.now();
    forms.add(chunk, await api.post<MoreUploads>(`${batchPath(created.batchId)}/uploads`, { files: declare(chunk) }), at);
  }
  return { batchId: created.batchId, forms };
}
