// The local queue's dead-letter list (queue.ts): in memory and, with a file, as JSON lines on disk, each letter
// written durably before its message leaves the journal.
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';

export interface DeadLetter {
  messageId: string;
  body: string;
  groupId?: string;
  description: string;
  receiveCount: number;
  sentAt: string;
  deadLetteredAt: string;
  lastError: string;
}

/** The dead letters: earlier runs' (read from the file at start) then this run's. */
export class DeadLetterList {
  private readonly letters: DeadLetter[] = [];

  constructor(
    private readonly file: string | undefined,
    private readonly log: (line: string) => void,
  ) {
    if (file && existsSync(file)) this.letters.push(...readJsonLines<DeadLetter>(file));
  }

  get size(): number {
    return this.letters.length;
  }

  list(): DeadLetter[] {
    return [...this.letters];
  }

  /** Keeps a letter, on disk first: throws, keeping nothing, when the file refuses it (a full disk). */
  add(letter: DeadLetter): void {
    if (this.file) appendDurably(this.file, JSON.stringify(letter) + '\n');
    this.letters.push(letter);
  }

  /** Empties the list (a redrive), returning what it held. */
  takeAll(): DeadLetter[] {
    return this.letters.splice(0);
  }

  /** Puts back, first, the letters a redrive could not send, and rewrites the file. */
  putBack(letters: DeadLetter[]): void {
    this.letters.unshift(...letters);
    this.save();
  }

  /** Removes the letters that match; returns how many. */
  forget(matches: (letter: DeadLetter) => boolean): number {
    const kept = this.letters.filter((letter) => !matches(letter));
    const removed = this.letters.length - kept.length;
    if (removed > 0) {
      this.letters.splice(0, this.letters.length, ...kept);
      this.save();
    }
    return removed;
  }

  /** Rewrites the dead-letter file whole (through a temporary renamed over it); a full disk leaves it as it was. */
  private save(): void {
    const file = this.file;
    if (!file || !existsSync(file)) return;
    const temporary = `${file}.tmp`;
    try {
      writeFileSync(temporary, this.letters.map((letter) => JSON.stringify(letter) + '\n').join(''));
      renameSync(temporary, file);
    } catch (err) {
      rmSync(temporary, { force: true });
      this.log(`[queue] ${file} not rewritten (${String(err)}): it still lists the dead letters redriven or requeued since`);
    }
  }
}

function appendDurably(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const fd = openSync(file, 'a+');
  try {
    // A line torn by an earlier write the disk cut short is ended first, so that this one stays whole.
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    const ended = size === 0 || (readSync(fd, last, 0, 1, size - 1) === 1 && last[0] === 0x0a);
    const line = Buffer.from(ended ? text : `\n${text}`);
    if (writeSync(fd, line) < line.length)
      throw Object.assign(new Error(`ENOSPC: no space left on device, a short write to ${file}`), { code: 'ENOSPC' });
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function readJsonLines<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as T];
      } catch {
        return [];
      }
    });
}
