// Writing s3rver's files whole (store.ts): each through a temporary renamed into place, several all or none, a
// request's body streamed and hashed, and the folder an object goes into held against a concurrent cleanup.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';

/**
 * Makes `folder` and creates the empty file `temporary` in it, which keeps the folder: a delete of the folder's last
 * object removes the emptied folders (s3rver's cleanup), and may do so between the mkdir and the file's creation.
 * S3 has no folders to lose, so the folder is made again rather than the write failing with ENOENT.
 */
export async function holdFolder(folder: string, temporary: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await mkdir(folder, { recursive: true });
      await (await open(temporary, 'wx')).close();
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === LIST_ATTEMPTS) throw err;
    }
  }
}

/** Walks of a listing before a file that keeps vanishing under it fails the request (and tries to hold a folder). */
export const LIST_ATTEMPTS = 10;

/** A file to write whole: `write` fills the temporary path given. */
export interface FileWrite {
  file: string;
  write: (temporary: string) => Promise<unknown>;
  /** `write` copies a file that may be missing (ENOENT): then `file` is removed. */
  absentSource?: boolean;
}
/** A file written to its temporary, to be renamed into place or dropped. */
export interface Staged {
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/** Writes `write.file`'s content to a temporary file in its folder; nothing of it remains when this rejects. */
async function stage({ file, write, absentSource }: FileWrite): Promise<Staged> {
  // Short, so that it fits wherever the file's own name does.
  const temporary = path.join(path.dirname(file), `.tmp-${crypto.randomBytes(4).toString('hex')}`);
  const discard = () => rm(temporary, { force: true });
  try {
    await write(temporary);
    return { commit: () => rename(temporary, file), discard };
  } catch (err) {
    await discard();
    if (absentSource && (err as NodeJS.ErrnoException).code === 'ENOENT')
      return { commit: () => rm(file, { force: true }), discard: async () => undefined };
    throw err;
  }
}

/**
 * Writes files whole, all or none: each goes to a temporary file first (what needs room), and only once every one is
 * written are they renamed into place, in order. A write that fails (a full disk) leaves every file as it was.
 */
export async function replaceFiles(files: readonly (FileWrite | Staged)[]): Promise<void> {
  const staged: Staged[] = [];
  try {
    for (const file of files) staged.push('commit' in file ? file : await stage(file));
  } catch (err) {
    await Promise.all([...staged, ...files.filter((f): f is Staged => 'commit' in f)].map((s) => s.discard()));
    throw err;
  }
  for (const [i, file] of staged.entries()) {
    try {
      await file.commit();
    } catch (err) {
      await Promise.all(staged.slice(i).map((s) => s.discard()));
      throw err;
    }
  }
}

/**
 * Streams `content` into `file`, hashing it. An error on either side rejects (s3rver's own version left the file
 * stream's errors unhandled, so an ENAMETOOLONG ended the process). The request is drained rather than destroyed,
 * so that its connection can still carry the error answer.
 */
export function writeContent(file: string, content: Readable | Buffer): Promise<{ size: number; md5: string }> {
  return new Promise((resolve, reject) => {
    const md5 = crypto.createHash('md5');
    let size = 0;
    const out = fs.createWriteStream(file);
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      if (!Buffer.isBuffer(content)) {
        content.unpipe();
        content.resume();
      }
      // Rejected once the file is closed: a stream destroyed before its open finished still creates the file after,
      // and the caller's removal of the temporary must come later than that.
      if (out.closed) reject(err);
      else out.once('close', () => reject(err));
      out.destroy();
    };
    out.on('error', fail);
    out.on('close', () => {
      if (!failed) resolve({ size, md5: md5.digest('hex') });
    });
    if (Buffer.isBuffer(content)) {
      md5.update(content);
      size = content.length;
      out.end(content);
      return;
    }
    const hasher = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        md5.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    content.on('error', fail);
    content.pipe(hasher).pipe(out);
  });
}
