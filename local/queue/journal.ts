// The local queue's durability: an append-only journal of JSON lines. A sent message is written and fsynced before
// `send` returns; receives and deletes are appended without a sync (losing one on a power cut only means one more
// delivery, which the ingest treats as a redelivery). Opening the journal replays it: every message not deleted is
// live again. A line torn by a crash mid-write is skipped, and the journal is rewritten with the live messages only
// at open, at close, and whenever dead entries dominate it.
// A write the disk refuses (a full disk) ends no process: a send that cannot be journaled throws (the message is not
// accepted: its object stays under uploads/ for the sweep), a receive or delete that cannot be journaled is kept in
// memory only (at worst one more delivery after a restart), and the file is rewritten whole once the disk has room.
import { closeSync, existsSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/** A message as the journal keeps it: what a redelivery needs. */
export interface JournaledMessage {
  messageId: string;
  body: string;
  /** MessageGroupId (the fair share's tenant). */
  groupId?: string;
  md5OfBody: string;
  sentAt: number;
  receiveCount: number;
  firstReceiveAt?: number;
  /** Epoch ms before which it is not delivered again (a visibility change after its last receive). */
  visibleAt?: number;
}

type Entry =
  | ({ op: 'send' } & JournaledMessage)
  | { op: 'receive'; messageId: string; receiveCount: number; at: number }
  | { op: 'visible'; messageId: string; at: number }
  | { op: 'delete'; messageId: string };

export interface JournalOptions {
  /** Rewrite once the file holds at least this many lines... */
  compactMinLines?: number;
  /** ...of which more than this many per live message are dead. */
  compactDeadPerLive?: number;
  /** Sync sent messages to the disk (default true; the bench measures the cost). */
  fsync?: boolean;
  /** Told of each write the disk refused (e.g. ENOSPC); the journal goes on in memory and catches up later. */
  onWriteFault?: (err: unknown) => void;
}

export interface JournalStats {
  file: string;
  lines: number;
  live: number;
  compactions: number;
  /** Lines skipped at open: torn by a crash mid-write, or not an entry. */
  skippedAtOpen: number;
}

export class QueueJournal {
  private fd: number | undefined;
  private lines = 0;
  private compactions = 0;
  private readonly live = new Map<string, JournaledMessage>();
  private readonly compactMinLines: number;
  private readonly compactDeadPerLive: number;
  private readonly fsync: boolean;
  private readonly onWriteFault: (err: unknown) => void;
  /** The file lacks entries that memory holds (an append failed): it is rewritten whole at the next chance. */
  private behind = false;
  private lastCatchUp = 0;
  /** The file ends inside a line (a short write): the next append starts a line of its own. */
  private torn = false;
  readonly skippedAtOpen: number;

  /** Opens (or creates) the journal at `file` and replays it. */
  constructor(
    readonly file: string,
    opts: JournalOptions = {},
  ) {
    this.compactMinLines = opts.compactMinLines ?? 1000;
    this.compactDeadPerLive = opts.compactDeadPerLive ?? 3;
    this.fsync = opts.fsync ?? true;
    this.onWriteFault = opts.onWriteFault ?? (() => undefined);
    mkdirSync(path.dirname(file), { recursive: true });
    // A rewrite that did not finish: the journal itself is still whole.
    rmSync(this.compactFile, { force: true });
    const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    this.skippedAtOpen = this.replay(text);
    // Rewriting at once also drops a torn last line, so that the next append starts a line of its own.
    try {
      this.rewrite();
    } catch (err) {
      // No room for the rewrite: appends go on at the end of the file as it is, and it is rewritten later.
      this.discardRewrite(err);
      this.fd = openSync(file, 'a');
      this.torn = text !== '' && !text.endsWith('\n');
      this.lines = text.split('\n').length - 1;
    }
  }

  /** The messages not deleted, oldest first. */
  messages(): JournaledMessage[] {
    return [...this.live.values()].map((m) => ({ ...m }));
  }

  /** Records a sent message; on disk when this returns, else it throws (the disk refused the write) and nothing is recorded. */
  sent(message: JournaledMessage): void {
    const entry: JournaledMessage = { ...message };
    this.append({ op: 'send', ...entry }, this.fsync, true);
    this.live.set(entry.messageId, entry);
  }

  received(messageId: string, receiveCount: number, at: number): void {
    const message = this.live.get(messageId);
    if (!message) return;
    message.receiveCount = receiveCount;
    message.firstReceiveAt ??= at;
    delete message.visibleAt;
    this.append({ op: 'receive', messageId, receiveCount, at }, false);
  }

  /** Records that the message is not to be delivered again before `at` (epoch ms); on disk when this returns. */
  visible(messageId: string, at: number): void {
    const message = this.live.get(messageId);
    if (!message) return;
    message.visibleAt = at;
    this.append({ op: 'visible', messageId, at }, this.fsync);
  }

  deleted(messageId: string): void {
    if (!this.live.delete(messageId)) return;
    this.append({ op: 'delete', messageId }, false);
    this.compactIfMostlyDead();
  }

  get isOpen(): boolean {
    return this.fd !== undefined;
  }

  stats(): JournalStats {
    return { file: this.file, lines: this.lines, live: this.live.size, compactions: this.compactions, skippedAtOpen: this.skippedAtOpen };
  }

  /** Rewrites the journal with its live messages and closes it; later calls do nothing (their messages stay live). */
  close(): void {
    if (this.fd === undefined) return;
    try {
      this.rewrite();
    } catch (err) {
      // What the file holds stays: at worst messages handled since the last rewrite are delivered once more.
      this.discardRewrite(err);
    }
    closeSync(this.fd);
    this.fd = undefined;
  }

  private get compactFile(): string {
    return `${this.file}.compact`;
  }

  private replay(text: string): number {
    const lines = text.split('\n');
    // The text after the last newline is a line whose write never finished.
    const torn = lines.pop() === '' ? 0 : 1;
    let skipped = torn;
    for (const line of lines) {
      const entry = parseEntry(line);
      if (!entry) {
        if (line.trim() !== '') skipped += 1;
        continue;
      }
      if (entry.op === 'send') {
        const { op: _op, ...message } = entry;
        this.live.set(message.messageId, message);
      } else if (entry.op === 'receive') {
        const message = this.live.get(entry.messageId);
        if (message) {
          message.receiveCount = Math.max(message.receiveCount, entry.receiveCount);
          message.firstReceiveAt ??= entry.at;
          delete message.visibleAt;
        }
      } else if (entry.op === 'visible') {
        const message = this.live.get(entry.messageId);
        if (message) message.visibleAt = entry.at;
      } else {
        this.live.delete(entry.messageId);
      }
    }
    return skipped;
  }

  /** Appends an entry; a write the disk refuses throws when `required`, else it is reported and caught up on later. */
  private append(entry: Entry, sync: boolean, required = false): void {
    if (this.fd === undefined) return;
    if (this.behind && Date.now() - this.lastCatchUp >= CATCH_UP_EVERY_MS) this.catchUp();
    const line = Buffer.from(`${this.torn ? '\n' : ''}${JSON.stringify(entry)}\n`);
    try {
      const written = writeSync(this.fd, line);
      if (written < line.length) {
        this.torn = true;
        throw Object.assign(new Error(`ENOSPC: no space left on device, wrote ${written} of ${line.length} bytes of a journal line`), {
          code: 'ENOSPC',
        });
      }
      this.torn = false;
      if (sync) fdatasyncSync(this.fd);
      this.lines += 1;
    } catch (err) {
      this.behind = true;
      this.onWriteFault(err);
      if (required) throw err;
    }
  }

  /** Rewrites the file from memory after failed appends, if the disk has room now. */
  private catchUp(): void {
    this.lastCatchUp = Date.now();
    try {
      this.rewrite();
      this.behind = false;
    } catch (err) {
      this.discardRewrite(err);
    }
  }

  private discardRewrite(err: unknown): void {
    try {
      rmSync(this.compactFile, { force: true });
    } catch {
      // Removed at the next open.
    }
    this.onWriteFault(err);
  }

  private compactIfMostlyDead(): void {
    const dead = this.lines - this.live.size;
    if (this.lines >= this.compactMinLines && dead > this.compactDeadPerLive * this.live.size) this.catchUp();
  }

  /** Writes the live messages to a new file, syncs it, and renames it over the journal (atomic on POSIX). */
  private rewrite(): void {
    const text = [...this.live.values()].map((m) => JSON.stringify({ op: 'send', ...m }) + '\n').join('');
    const fd = openSync(this.compactFile, 'w');
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(this.compactFile, this.file);
    syncDirectory(path.dirname(this.file));
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = openSync(this.file, 'a');
    this.lines = this.live.size;
    this.torn = false;
    this.behind = false;
    this.compactions += 1;
  }
}

/** How often, at most, a journal behind its messages tries to rewrite itself while the disk stays full. */
const CATCH_UP_EVERY_MS = 1000;

function parseEntry(line: string): Entry | undefined {
  try {
    const entry = JSON.parse(line) as Partial<Entry> | null;
    if (!entry || typeof entry !== 'object' || typeof entry.messageId !== 'string') return undefined;
    if (entry.op === 'send' && typeof entry.body === 'string' && typeof entry.sentAt === 'number') {
      return { ...entry, receiveCount: Number(entry.receiveCount) || 0 } as Entry;
    }
    if (entry.op === 'receive' && typeof entry.receiveCount === 'number') return entry as Entry;
    if (entry.op === 'visible' && typeof entry.at === 'number') return entry as Entry;
    if (entry.op === 'delete') return entry as Entry;
    return undefined;
  } catch {
    return undefined;
  }
}

/** Makes a rename inside `dir` durable. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse to sync a directory; the rename is then as durable as they make it.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
