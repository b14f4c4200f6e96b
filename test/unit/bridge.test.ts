import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { LocalMessageVisibility } from '../../lib/aws/message-visibility';
import { encodeS3EventKey, keysInS3Message, s3EventRecord } from '../../lib/reconcile/s3-event';
import { localS3EventMessage } from '../../local/bridge/bridge';
import type { LocalQueueOptions } from '../../local/queue/options';
import { LocalQueue } from '../../local/queue/queue';

/** The form decoding AWS documents for event keys (what a handler does with them). */
const formDecode = (key: string) => decodeURIComponent(key.replace(/\+/g, ' '));

describe('encodeS3EventKey', () => {
  it.each([
    ['a space', 'uploads/c/b/red flower.jpg', 'uploads/c/b/red+flower.jpg'],
    ['a plus', 'uploads/c/b/a+b.jpg', 'uploads/c/b/a%2Bb.jpg'],
    ['a percent sign', 'uploads/c/b/100%.jpg', 'uploads/c/b/100%25.jpg'],
    ['an encoded-looking %2B', 'uploads/c/b/x%2B.jpg', 'uploads/c/b/x%252B.jpg'],
    ['parentheses', 'uploads/c/b/cat (1).jpg', 'uploads/c/b/cat+%281%29.jpg'],
    ['unicode as UTF-8 bytes', 'uploads/c/b/café 猫.png', 'uploads/c/b/caf%C3%A9+%E7%8C%AB.png'],
    ['an emoji (4 bytes)', 'uploads/c/b/😺.jpg', 'uploads/c/b/%F0%9F%98%BA.jpg'],
    [
      'reserved characters',
      "uploads/c/b/a=b&c;d:e,f?g@h$i#j~k!l'm.jpg",
      'uploads/c/b/a%3Db%26c%3Bd%3Ae%2Cf%3Fg%40h%24i%23j%7Ek%21l%27m.jpg',
    ],
  ])('encodes %s as S3 event notifications do', (_name, key, expected) => {
    // Act
    const encoded = encodeS3EventKey(key);

    // Assert
    expect(encoded).toBe(expected);
  });

  it('keeps slashes and the form-safe characters * - . _ as they are', () => {
    expect(encodeS3EventKey('uploads/A-z_0.9*/x.jpg')).toBe('uploads/A-z_0.9*/x.jpg');
  });

  it('round-trips through form decoding for space, plus, percent and unicode together', () => {
    // Arrange
    const key = 'uploads/demo/b1/a +%2B (ü) 猫.jpg';

    // Act
    const decoded = formDecode(encodeS3EventKey(key));

    // Assert
    expect(decoded).toBe(key);
  });
});

describe('s3EventRecord', () => {
  it('builds an eventVersion 2.1 ObjectCreated record with the encoded key, bucket ARN and ETag', () => {
    // Arrange
    const event = {
      operation: 'Put' as const,
      bucket: 'icecat-images',
      key: 'uploads/demo/b1/my cat+.jpg',
      size: 1234,
      eTag: 'd41d8cd98f00b204e9800998ecf8427e',
      sourceIp: '127.0.0.1',
      time: new Date('2024-05-01T12:00:00.000Z'),
    };

    // Act
    const record = s3EventRecord(event, { sequencer: '0055AED6DCD90281E5', region: 'us-east-1' });

    // Assert
    expect(record).toMatchObject({
      eventVersion: '2.1',
      eventSource: 'aws:s3',
      awsRegion: 'us-east-1',
      eventTime: '2024-05-01T12:00:00.000Z',
      eventName: 'ObjectCreated:Put',
      requestParameters: { sourceIPAddress: '127.0.0.1' },
      s3: {
        s3SchemaVersion: '1.0',
        bucket: { name: 'icecat-images', arn: 'arn:aws:s3:::icecat-images' },
        object: { key: 'uploads/demo/b1/my+cat%2B.jpg', size: 1234, eTag: event.eTag, sequencer: '0055AED6DCD90281E5' },
      },
    });
  });

  it('names multipart completions ObjectCreated:CompleteMultipartUpload', () => {
    const record = s3EventRecord(
      { operation: 'CompleteMultipartUpload', bucket: 'b', key: 'uploads/x', size: 1, eTag: 'e', sourceIp: '127.0.0.1', time: new Date() },
      { region: 'us-east-1' },
    );

    expect(record.eventName).toBe('ObjectCreated:CompleteMultipartUpload');
  });
});

// ---------------------------------------------------------------------------------------------------------

type FakeHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

function recordingBridge(handle: FakeHandler, options: Partial<LocalQueueOptions> = {}) {
  const batches: SQSRecord[][] = [];
  const logs: string[] = [];
  const bridge = new LocalQueue({
    handler: async (event) => {
      batches.push(event.Records);
      return handle(event);
    },
    batchWindowMs: 5,
    retryBaseMs: 5,
    retryMaxMs: 20,
    log: (line) => logs.push(line),
    ...options,
  });
  const deliveries = (body: string) => batches.flat().filter((r) => r.body === body);
  return { bridge, batches, logs, deliveries };
}

const succeedAll: FakeHandler = async () => ({ batchItemFailures: [] });

describe('LocalQueue', () => {
  it('delivers every message exactly once in batches of at most batchSize', async () => {
    // Arrange
    const { bridge, batches } = recordingBridge(succeedAll, { batchSize: 10 });

    // Act
    for (let i = 0; i < 25; i += 1) bridge.send(`m${i}`);
    await bridge.whenIdle(5000);

    // Assert
    expect(batches.every((b) => b.length <= 10)).toBe(true);
    expect(
      batches
        .flat()
        .map((r) => r.body)
        .sort(),
    ).toEqual(Array.from({ length: 25 }, (_, i) => `m${i}`).sort());
  });

  it('gives each record the SQS shape: ids, md5 of the body, receive count, source ARN', async () => {
    // Arrange
    const { bridge, batches } = recordingBridge(succeedAll, { queueArn: 'arn:aws:sqs:us-east-1:123456789000:q' });

    // Act
    const messageId = bridge.send('{"Records":[]}');
    await bridge.whenIdle(5000);

    // Assert
    const record = batches[0]?.[0];
    expect(record).toMatchObject({
      messageId,
      body: '{"Records":[]}',
      md5OfBody: createHash('md5').update('{"Records":[]}').digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789000:q',
      awsRegion: 'us-east-1',
      messageAttributes: {},
      attributes: { ApproximateReceiveCount: '1' },
    });
    expect(record?.receiptHandle).toEqual(expect.any(String));
    expect(record?.attributes.SentTimestamp).toMatch(/^\d+$/);
  });

  it('retries only the messages named in batchItemFailures, with a higher receive count', async () => {
    // Arrange
    let failedOnce = false;
    const { bridge, deliveries } = recordingBridge(async (event) => {
      const flaky = event.Records.find((r) => r.body === 'flaky');
      if (flaky && !failedOnce) {
        failedOnce = true;
        return { batchItemFailures: [{ itemIdentifier: flaky.messageId }] };
      }
      return { batchItemFailures: [] };
    });

    // Act
    bridge.send('steady');
    bridge.send('flaky');
    await bridge.whenIdle(5000);

    // Assert
    expect(deliveries('steady')).toHaveLength(1);
    expect(deliveries('flaky').map((r) => r.attributes.ApproximateReceiveCount)).toEqual(['1', '2']);
    expect(bridge.stats()).toMatchObject({ succeeded: 2, retried: 1, deadLettered: 0 });
  });

  it('retries the whole batch when the handler throws', async () => {
    // Arrange
    let calls = 0;
    const { bridge, deliveries } = recordingBridge(async () => {
      calls += 1;
      if (calls === 1) throw new Error('boom');
    });

    // Act
    bridge.send('a');
    bridge.send('b');
    await bridge.whenIdle(5000);

    // Assert
    expect(deliveries('a')).toHaveLength(2);
    expect(deliveries('b')).toHaveLength(2);
  });

  it('fails the whole batch when batchItemFailures names an unknown message, as Lambda does', async () => {
    // Arrange
    let calls = 0;
    const { bridge, deliveries } = recordingBridge(async () => {
      calls += 1;
      return calls === 1 ? { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] } : undefined;
    });

    // Act
    bridge.send('a');
    bridge.send('b');
    await bridge.whenIdle(5000);

    // Assert
    expect(deliveries('a')).toHaveLength(2);
    expect(deliveries('b')).toHaveLength(2);
  });

  it('moves a message that keeps failing to the dead-letter list and file after maxReceiveCount receives', async () => {
    // Arrange
    const dlqFile = path.join(mkdtempSync(path.join(tmpdir(), 'bridge-')), 'dlq.jsonl');
    const { bridge, deliveries, logs } = recordingBridge(
      async (event) => ({
        batchItemFailures: event.Records.filter((r) => r.body === 'poison').map((r) => ({ itemIdentifier: r.messageId })),
      }),
      { maxReceiveCount: 3, dlqFile },
    );

    // Act
    const poisonId = bridge.send('poison');
    bridge.send('fine');
    await bridge.whenIdle(5000);

    // Assert
    expect(deliveries('poison')).toHaveLength(3);
    expect(bridge.deadLetters()).toEqual([
      expect.objectContaining({ messageId: poisonId, body: 'poison', receiveCount: 3, lastError: 'reported in batchItemFailures' }),
    ]);
    const persisted = readFileSync(dlqFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(persisted).toEqual([expect.objectContaining({ messageId: poisonId })]);
    expect(logs.some((l) => l.includes('dead-lettered'))).toBe(true);
  });

  it('redrives dead letters to the queue once the cause is fixed, emptying the list and its file', async () => {
    // Arrange
    const dlqFile = path.join(mkdtempSync(path.join(tmpdir(), 'bridge-')), 'dlq.jsonl');
    let broken = true;
    const { bridge, deliveries } = recordingBridge(
      async () => (broken ? Promise.reject(new Error('detector down')) : { batchItemFailures: [] }),
      { maxReceiveCount: 2, dlqFile },
    );
    bridge.send('stuck');
    await bridge.whenIdle(5000);
    broken = false;

    // Act
    const redriven = bridge.redrive();
    await bridge.whenIdle(5000);

    // Assert
    expect(redriven).toBe(1);
    expect(deliveries('stuck')).toHaveLength(3);
    expect(bridge.deadLetters()).toEqual([]);
    expect(readFileSync(dlqFile, 'utf8')).toBe('');
    expect(bridge.stats()).toMatchObject({ succeeded: 1, deadLettered: 1 });
  });

  it("shows earlier runs' dead letters read back from the dead-letter file", async () => {
    // Arrange
    const dlqFile = path.join(mkdtempSync(path.join(tmpdir(), 'bridge-')), 'dlq.jsonl');
    const first = recordingBridge(async () => Promise.reject(new Error('always')), { maxReceiveCount: 1, dlqFile });
    first.bridge.send('lost');
    await first.bridge.whenIdle(5000);

    // Act
    const second = recordingBridge(succeedAll, { dlqFile });

    // Assert
    expect(second.bridge.deadLetters()).toEqual([expect.objectContaining({ body: 'lost', lastError: 'Error: always' })]);
  });

  it('never runs more batches at once than maxConcurrency', async () => {
    // Arrange
    let running = 0;
    let mostAtOnce = 0;
    const { bridge } = recordingBridge(
      async () => {
        running += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        await new Promise((resolve) => setTimeout(resolve, 10));
        running -= 1;
      },
      { batchSize: 1, maxConcurrency: 2 },
    );

    // Act
    for (let i = 0; i < 8; i += 1) bridge.send(`m${i}`);
    await bridge.whenIdle(5000);

    // Assert
    expect(mostAtOnce).toBe(2);
  });

  it('delivers again from its journal, at the next start, a message sent but not handled before stop', async () => {
    // Arrange
    const journalFile = path.join(mkdtempSync(path.join(tmpdir(), 'bridge-')), 'queue.journal');
    const first = recordingBridge(succeedAll, { journalFile, batchWindowMs: 60_000, batchSize: 10 });
    first.bridge.send('pending');

    // Act
    await first.bridge.stop();
    const second = recordingBridge(succeedAll, { journalFile });
    await second.bridge.whenIdle(5000);

    // Assert
    expect(first.deliveries('pending')).toHaveLength(0);
    expect(second.deliveries('pending')).toHaveLength(1);
    expect(second.bridge.stats()).toMatchObject({ recovered: 1, succeeded: 1 });
  });

  it('does not deliver again, after a restart, a message it deleted once handled', async () => {
    // Arrange
    const journalFile = path.join(mkdtempSync(path.join(tmpdir(), 'bridge-')), 'queue.journal');
    const first = recordingBridge(succeedAll, { journalFile });
    first.bridge.send('done');
    await first.bridge.whenIdle(5000);
    await first.bridge.stop();

    // Act
    const second = recordingBridge(succeedAll, { journalFile });
    await second.bridge.whenIdle(5000);

    // Assert
    expect(second.batches).toEqual([]);
    expect(second.bridge.stats().recovered).toBe(0);
  });

  it('delivers a message handed back with ChangeMessageVisibility after that delay, not after the backoff', async () => {
    // Arrange: the first receive hands the message back for 1 s (the ingest finding a claim still leased).
    const visibility = new LocalMessageVisibility();
    const receivedAt: number[] = [];
    const { bridge, deliveries } = recordingBridge(
      async (event) => {
        receivedAt.push(Date.now());
        if (receivedAt.length > 1) return { batchItemFailures: [] };
        const [record] = event.Records as [SQSRecord];
        await visibility.retryLater(
          [{ messageId: record.messageId, receiptHandle: record.receiptHandle, delaySeconds: 1 }],
          () => undefined,
        );
        return { batchItemFailures: [{ itemIdentifier: record.messageId }] };
      },
      { visibility },
    );

    // Act
    bridge.send('leased');
    await bridge.whenIdle(5000);

    // Assert: the backoff alone (retryMaxMs 20) would have delivered it within a few ms.
    expect(deliveries('leased')).toHaveLength(2);
    expect(receivedAt[1]! - receivedAt[0]!).toBeGreaterThanOrEqual(950);
    expect(bridge.stats()).toMatchObject({ succeeded: 1, retried: 1, deadLettered: 0 });
  });

  it('keeps a handed-back message invisible across a restart until its delay is over', async () => {
    // Arrange: hand the message back for 1.5 s, then stop the queue at once.
    const journalFile = path.join(mkdtempSync(path.join(tmpdir(), 'bridge-')), 'queue.journal');
    const visibility = new LocalMessageVisibility();
    const first = recordingBridge(
      async (event) => {
        const [record] = event.Records as [SQSRecord];
        await visibility.retryLater(
          [{ messageId: record.messageId, receiptHandle: record.receiptHandle, delaySeconds: 1.5 }],
          () => undefined,
        );
        return { batchItemFailures: [{ itemIdentifier: record.messageId }] };
      },
      { journalFile, batchWindowMs: 0, visibility },
    );
    first.bridge.send('leased');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const handedBackAt = Date.now();
    await first.bridge.stop(1000);

    // Act
    let secondAt = 0;
    const second = recordingBridge(
      async () => {
        secondAt = Date.now();
        return { batchItemFailures: [] };
      },
      { journalFile },
    );
    await second.bridge.whenIdle(5000);

    // Assert
    expect(second.deliveries('leased').map((r) => r.attributes.ApproximateReceiveCount)).toEqual(['2']);
    expect(secondAt - handedBackAt).toBeGreaterThanOrEqual(1300);
  });

  it('answers false to a visibility change for a receipt handle it has not in flight', () => {
    const { bridge } = recordingBridge(succeedAll);
    expect(bridge.changeMessageVisibility('not-a-handle', 5)).toBe(false);
  });

  it('delivers again a message whose batch was still running at stop, counting the receive it had', async () => {
    // Arrange: a handler that never finishes within the drain time.
    const journalFile = path.join(mkdtempSync(path.join(tmpdir(), 'bridge-')), 'queue.journal');
    const first = recordingBridge(() => new Promise(() => undefined), { journalFile, batchWindowMs: 0, invocationTimeoutMs: 200 });
    first.bridge.send('interrupted');
    await new Promise((resolve) => setTimeout(resolve, 20));

    // Act
    await first.bridge.stop(10);
    const second = recordingBridge(succeedAll, { journalFile });
    await second.bridge.whenIdle(5000);

    // Assert
    expect(second.deliveries('interrupted').map((r) => r.attributes.ApproximateReceiveCount)).toEqual(['2']);
  });

  it('dead-letters at start a message that was in flight at its last allowed receive, as SQS does on the next receive', async () => {
    // Arrange
    const dir = mkdtempSync(path.join(tmpdir(), 'bridge-'));
    const journalFile = path.join(dir, 'queue.journal');
    const dlqFile = path.join(dir, 'dlq.jsonl');
    const first = recordingBridge(() => new Promise(() => undefined), {
      journalFile,
      batchWindowMs: 0,
      maxReceiveCount: 1,
      invocationTimeoutMs: 200,
    });
    first.bridge.send('crashes the handler');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await first.bridge.stop(10);

    // Act
    const second = recordingBridge(succeedAll, { journalFile, dlqFile, maxReceiveCount: 1 });
    await second.bridge.whenIdle(5000);

    // Assert
    expect(second.batches).toEqual([]);
    expect(second.bridge.deadLetters()).toEqual([expect.objectContaining({ body: 'crashes the handler', receiveCount: 1 })]);
  });

  it('knows which object keys its undeleted messages name, until they are deleted', async () => {
    // Arrange
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { bridge } = recordingBridge(async () => gate.then(() => ({ batchItemFailures: [] })), {
      keysOf: (body) => keysInS3Message(body).map((k) => k.key),
      batchWindowMs: 0,
    });
    const key = 'uploads/demo/b/a cat.jpg';

    // Act
    bridge.send(
      localS3EventMessage({ operation: 'Put', bucket: 'icecat-images', key, size: 1, eTag: 'e', sourceIp: '127.0.0.1', time: new Date() }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const whileInFlight = bridge.hasMessageFor(key);
    release();
    await bridge.whenIdle(5000);

    // Assert
    expect([whileInFlight, bridge.hasMessageFor(key), bridge.hasMessageFor('uploads/demo/b/other.jpg')]).toEqual([true, false, false]);
  });

  it('journals but delivers nothing while paused, then delivers on resume', async () => {
    // Arrange
    const journalFile = path.join(mkdtempSync(path.join(tmpdir(), 'bridge-')), 'queue.journal');
    const { bridge, deliveries } = recordingBridge(succeedAll, { journalFile, paused: true, batchWindowMs: 0 });
    bridge.send('early');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const whilePaused = deliveries('early').length;

    // Act
    bridge.resume();
    await bridge.whenIdle(5000);

    // Assert
    expect([whilePaused, deliveries('early').length]).toEqual([0, 1]);
  });

  it('stays busy while held and reports idle once released', async () => {
    // Arrange
    const { bridge } = recordingBridge(succeedAll);
    const release = bridge.hold();

    // Act
    const idleBefore = bridge.idle;
    release();

    // Assert
    expect(idleBefore).toBe(false);
    expect(bridge.idle).toBe(true);
  });
});
