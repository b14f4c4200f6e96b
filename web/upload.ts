// Files from a drop (files or whole folders, through webkitGetAsEntry) or a file input, and their upload through
// the presigned POST forms with XMLHttpRequest, whose upload events give per-file progress.
import type { UploadForm } from './api';
import { WebAppError } from './errors';

export interface PickedFile {
  /** The name the batch records: the path inside a dropped folder, else the file's name. */
  name: string;
  file: File;
  contentType: string;
}

const TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  heic: 'image/heic',
  heif: 'image/heif',
  avif: 'image/avif',
  svg: 'image/svg+xml',
};

/** The file's image type, from the browser or else its extension; null for anything not an image. */
export function imageType(file: File): string | null {
  if (file.type.startsWith('image/')) return file.type;
  if (file.type) return null;
  return TYPES[file.name.split('.').pop()?.toLowerCase() ?? ''] ?? null;
}

function readAll(reader: FileSystemDirectoryReader): Promise<FileSystemEntry[]> {
  return new Promise((resolve, reject) => {
    const all: FileSystemEntry[] = [];
    // readEntries answers at most ~100 entries a call: call until it answers none.
    const next = () =>
      reader.readEntries((batch) => {
        if (batch.length === 0) resolve(all);
        else {
          all.push(...batch);
          next();
        }
      }, reject);
    next();
  });
}

async function walk(entry: FileSystemEntry, prefix: string, out: { name: string; file: File }[]): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    out.push({ name: `${prefix}${entry.name}`, file });
  } else if (entry.isDirectory) {
    for (const child of await readAll((entry as FileSystemDirectoryEntry).createReader())) {
      await walk(child, `${prefix}${entry.name}/`, out);
    }
  }
}

/** Everything dropped: entries must be taken while the drop event runs; the folders are read afterwards. */
export function droppedFiles(data: DataTransfer): Promise<{ name: string; file: File }[]> {
  const entries: FileSystemEntry[] = [];
  const loose: File[] = [];
  for (const item of Array.from(data.items)) {
    if (item.kind !== 'file') continue;
    const entry = item.webkitGetAsEntry?.();
    if (entry) entries.push(entry);
    else {
      const file = item.getAsFile();
      if (file) loose.push(file);
    }
  }
  if (entries.length === 0 && loose.length === 0) loose.push(...Array.from(data.files));
  return (async () => {
    const out = loose.map((file) => ({ name: file.name, file }));
    for (const entry of entries) await walk(entry, '', out);
    return out;
  })();
}

/** Files chosen with an input (a folder input gives each file's path inside the folder). */
export const chosenFiles = (list: FileList): { name: string; file: File }[] =>
  Array.from(list).map((file) => ({ name: file.webkitRelativePath || file.name, file }));

export class UploadError extends WebAppError {
  override name = 'UploadError';
  readonly code: string = 'upload_failed';
  /** S3's status; 0 when the browser saw none (a network error, or an answer CORS hid). */
  readonly status: number;
  readonly s3Message: string;
  constructor(message: string, options: { status?: number; s3Message?: string } = {}) {
    super(message);
    this.status = options.status ?? 0;
    this.s3Message = options.s3Message ?? '';
  }

  /** S3 refused the form because its policy expired: a renewed form will do. */
  get expired(): boolean {
    return this.status === 403 && /policy expired/i.test(this.s3Message);
  }
}

/** One presigned POST, reporting bytes sent; S3 answers 204 (or 200/201) when it stored the object. */
export function postFormWithProgress(
  form: UploadForm,
  picked: PickedFile,
  onProgress: (sent: number, total: number) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const body = new FormData();
    for (const [name, value] of Object.entries(form.fields)) body.append(name, value);
    body.append('file', picked.file, picked.name.split('/').pop());
    const xhr = new XMLHttpRequest();
    xhr.open('POST', form.url);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : picked.file.size);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve();
      else {
        const code = /<Code>([^<]+)<\/Code>/.exec(xhr.responseText)?.[1];
        const message = /<Message>([^<]+)<\/Message>/.exec(xhr.responseText)?.[1] ?? '';
        reject(new UploadError(`S3 answered ${xhr.status}${code ? ` ${code}` : ''}`, { status: xhr.status, s3Message: message }));
      }
    };
    xhr.onerror = () => reject(new UploadError('network error'));
    xhr.ontimeout = () => reject(new UploadError('timed out'));
    xhr.send(body);
  });
}

/** Runs `work` over `items` with at most `limit` at once. */
export async function eachLimited<T>(items: T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      await work(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
