// What the local queue keeps after many messages: nothing per message once it is deleted (docs/design.md §4), only
// the dead letters; the journal's file stays bounded by its compaction.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { LocalQueue } from '../../local/queue/queue';

const MESSAGES = 1000;

describe('LocalQueue.retained', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'icecat-queue-retained-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it(`holds no entry per message after ${MESSAGES} messages with retries, dead letters and idle waiters that timed out`, async () => {
    // Arrange: every 10th message fails its first receive, every 100th (offset 5) every receive.
    const seen = new Set<string>();
    const queue = new LocalQueue({
      journalFile: path.join(dir, 'queue.journal'),
      dlqFile: path.join(dir, 'dlq.jsonl'),
      journal: { fsync: false },
      batchSize: 10,
      batchWindowMs: 0,
      maxReceiveCount: 2,
      retryBaseMs: 1,
      retryMaxMs: 2,
      keysOf: (body) => [body],
      log: () => undefined,
      handler: async (event: SQSEvent): Promise<SQSBatchResponse> => ({
        batchItemFailures: event.Records.filter((r) => {
          const i = Number(r.body.slice(1));
          const first = !seen.has(r.body);
          seen.add(r.body);
          return i % 100 === 5 || (i % 10 === 0 && first);
        }).map((r) => ({ itemIdentifier: r.messageId })),
      }),
    });
    try {
      // Act
      const waiters: Promise<unknown>[] = [];
      for (let i = 0; i < MESSAGES; i++) {
        queue.send(`k${i}`);
        if (i % 20 === 0) waiters.push(queue.whenIdle(1).catch(() => undefined));
      }
      await Promise.all(waiters);
      await queue.whenIdle(30_000);
      // The last invocation leaves `running` just after it made the queue idle.
      await new Promise((resolve) => setImmediate(resolve));

      // Assert
      expect(queue.retained()).toEqual({
        ready: 0,
        delayed: 0,
        inFlight: 0,
        keys: 0,
        timers: 0,
        running: 0,
        idleWaiters: 0,
        deadLetters: MESSAGES / 100,
        interrupted: 0,
      });
      const journal = queue.stats().journal;
      expect(journal?.live).toBe(0);
      expect(journal?.lines).toBeLessThanOrEqual(1000);
    } finally {
      await queue.stop(1000);
    }
  });
});
