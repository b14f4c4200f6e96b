// The local queue's journal on a real full filesystem (a 1 MiB tmpfs mounted by the test: CI runs as root, and a test
// that cannot mount one fails, it is never skipped): a send it cannot write throws ENOSPC and is not accepted, receives
// and deletes it cannot write do not throw, and once there is room the file is rewritten whole from memory.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type JournaledMessage, QueueJournal } from '../../local/queue/journal';

const message = (id: string): JournaledMessage => ({
  messageId: id,
  body: `body of ${id} `.repeat(200),
  md5OfBody: 'md5',
  sentAt: 1_700_000_000_000,
  receiveCount: 0,
});
const idsOf = (journal: QueueJournal) => journal.messages().map((m) => m.messageId);

describe('QueueJournal on a full disk', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'journal-disk-'));
  const mountPoint = path.join(work, 'mnt');
  let mounted = false;

  beforeAll(() => {
    mkdirSync(mountPoint);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint]);
    mounted = true;
  });

  afterAll(() => {
    if (mounted) execFileSync('umount', ['-l', mountPoint]);
    rmSync(work, { recursive: true, force: true });
  });

  it('refuses the send it cannot write, keeps the rest in memory without throwing, and catches up once there is room', async () => {
    // Arrange
    const file = path.join(mountPoint, 'queue.journal');
    const faults: unknown[] = [];
    const journal = new QueueJournal(file, { onWriteFault: (err) => faults.push(err) });
    for (const id of ['a', 'b', 'c']) journal.sent(message(id));
    journal.received('a', 1, Date.now());
    const { bavail, bsize } = statfsSync(mountPoint);
    execFileSync('fallocate', ['-l', String(bavail * bsize), path.join(mountPoint, 'filler')]);

    // Act: sends until the disk refuses one (the journal's last page may still hold a line or two).
    let refused: NodeJS.ErrnoException | undefined;
    const accepted: string[] = [];
    for (let i = 0; i < 20 && !refused; i++) {
      try {
        journal.sent(message(`full-${i}`));
        accepted.push(`full-${i}`);
      } catch (err) {
        refused = err as NodeJS.ErrnoException;
      }
    }
    expect(() => journal.deleted('a')).not.toThrow();
    expect(() => journal.received('b', 1, Date.now())).not.toThrow();

    // Assert: the refused send is not in the journal, and the faults were reported.
    expect(refused?.code).toBe('ENOSPC');
    expect(idsOf(journal)).toEqual(['b', 'c', ...accepted]);
    expect(faults.length).toBeGreaterThan(0);

    // Act: room again; the next write (after the catch-up pause) rewrites the file from memory.
    rmSync(path.join(mountPoint, 'filler'));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    journal.sent(message('d'));

    // Assert: a reopen (as after a crash) gives back exactly what memory holds, with no torn line and no leftover.
    const reopened = new QueueJournal(file);
    expect(idsOf(reopened)).toEqual(['b', 'c', ...accepted, 'd']);
    expect(reopened.skippedAtOpen).toBe(0);
    expect(existsSync(`${file}.compact`)).toBe(false);
    reopened.close();
    journal.close();
  });
});
