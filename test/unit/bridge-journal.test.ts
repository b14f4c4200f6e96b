// The local queue's journal: what survives a stop, a crash mid-write and a compaction.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type JournaledMessage, QueueJournal } from '../../local/queue/journal';

const journalPath = () => path.join(mkdtempSync(path.join(tmpdir(), 'journal-')), 'queue.journal');
const message = (id: string, body = `body of ${id}`): JournaledMessage => ({
  messageId: id,
  body,
  md5OfBody: 'md5',
  sentAt: 1_700_000_000_000,
  receiveCount: 0,
});
const idsOf = (journal: QueueJournal) => journal.messages().map((m) => m.messageId);
const lineCount = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).length;

describe('QueueJournal', () => {
  it('gives back, when opened again, every message sent and not deleted, oldest first', () => {
    // Arrange
    const file = journalPath();
    const first = new QueueJournal(file);
    for (const id of ['a', 'b', 'c', 'd']) first.sent(message(id));
    first.deleted('b');
    first.deleted('d');

    // Act: no close, as after a crash.
    const second = new QueueJournal(file);

    // Assert
    expect(idsOf(second)).toEqual(['a', 'c']);
    expect(second.messages()[0]).toEqual(message('a'));
  });

  it('keeps the receive count and first receive time of a message across a reopen', () => {
    // Arrange
    const file = journalPath();
    const first = new QueueJournal(file);
    first.sent(message('a'));
    first.received('a', 1, 111);
    first.received('a', 2, 222);

    // Act
    const second = new QueueJournal(file);

    // Assert
    expect(second.messages()).toEqual([{ ...message('a'), receiveCount: 2, firstReceiveAt: 111 }]);
  });

  it('skips a torn last line and appends the next entry on a line of its own', () => {
    // Arrange: a crash in the middle of writing the second send.
    const file = journalPath();
    const first = new QueueJournal(file);
    first.sent(message('a'));
    appendFileSync(file, '{"op":"send","messageId":"b","body":"half');

    // Act
    const second = new QueueJournal(file);
    second.sent(message('c'));
    const third = new QueueJournal(file);

    // Assert
    expect(second.skippedAtOpen).toBe(1);
    expect(idsOf(third)).toEqual(['a', 'c']);
    expect(third.skippedAtOpen).toBe(0);
  });

  it('skips a line that is not an entry, wherever it is, and keeps the rest', () => {
    // Arrange
    const file = journalPath();
    writeFileSync(
      file,
      [
        JSON.stringify({ op: 'send', ...message('a') }),
        'not json',
        JSON.stringify({ op: 'mystery', messageId: 'x' }),
        JSON.stringify({ op: 'send', ...message('b') }),
        JSON.stringify({ op: 'delete', messageId: 'a' }),
        '',
      ].join('\n'),
    );

    // Act
    const journal = new QueueJournal(file);

    // Assert
    expect([idsOf(journal), journal.skippedAtOpen]).toEqual([['b'], 2]);
  });

  it('rewrites itself once dead entries dominate, keeping exactly the live messages', () => {
    // Arrange
    const file = journalPath();
    const journal = new QueueJournal(file, { compactMinLines: 20, compactDeadPerLive: 3 });
    journal.sent(message('keep'));

    // Act: 30 messages sent and deleted: 61 lines for one live message.
    for (let i = 0; i < 30; i += 1) {
      journal.sent(message(`m${i}`));
      journal.deleted(`m${i}`);
    }

    // Assert
    expect(journal.stats().compactions).toBeGreaterThan(1);
    expect(lineCount(file)).toBeLessThan(20);
    expect(idsOf(new QueueJournal(file))).toEqual(['keep']);
  });

  it('leaves only live messages in the file at close', () => {
    // Arrange
    const file = journalPath();
    const journal = new QueueJournal(file);
    for (const id of ['a', 'b', 'c']) journal.sent(message(id));
    journal.deleted('a');
    journal.received('c', 1, 5);

    // Act
    journal.close();

    // Assert
    expect(
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).messageId),
    ).toEqual(['b', 'c']);
  });

  it('ignores a rewrite a crash left unfinished: the journal itself is whole', () => {
    // Arrange
    const file = journalPath();
    new QueueJournal(file).sent(message('a'));
    writeFileSync(`${file}.compact`, '{"op":"send","messageId":"zzz","bo');

    // Act
    const journal = new QueueJournal(file);

    // Assert
    expect([idsOf(journal), existsSync(`${file}.compact`)]).toEqual([['a'], false]);
  });

  it('loses no message whose send returned when its process is killed with SIGKILL mid-stream', async () => {
    // Arrange: a child sends as fast as it can and reports each id once sent() has returned.
    const file = journalPath();
    const script = `
      const { QueueJournal } = require(${JSON.stringify(path.join(__dirname, '../../local/queue/journal.ts'))});
      const journal = new QueueJournal(${JSON.stringify(file)}, { compactMinLines: 50 });
      let i = 0;
      setInterval(() => {
        for (let k = 0; k < 20; k += 1, i += 1) {
          const id = 'm' + i;
          journal.sent({ messageId: id, body: 'x'.repeat(i % 300), md5OfBody: 'md5', sentAt: Date.now(), receiveCount: 0 });
          process.stdout.write('sent ' + id + '\\n');
          if (i % 3 === 0) {
            journal.deleted(id);
            process.stdout.write('deleted ' + id + '\\n');
          }
        }
      }, 1);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (out.split('\n').length > 600) {
          clearInterval(check);
          resolve();
        }
      }, 5);
    });

    // Act
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const journal = new QueueJournal(file);

    // Assert
    const reported = (what: string) =>
      out
        .split('\n')
        .filter((line) => line.startsWith(`${what} `))
        .map((line) => line.slice(what.length + 1));
    const deleted = new Set(reported('deleted'));
    const live = new Set(idsOf(journal));
    expect(reported('sent').filter((id) => !deleted.has(id) && !live.has(id))).toEqual([]);
    expect([...live].filter((id) => deleted.has(id))).toEqual([]);
  }, 20_000);
});
