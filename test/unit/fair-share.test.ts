import type { SQSEvent } from 'aws-lambda';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FairReadyList, LOCAL_FAIR_SHARE, SQS_FAIR_SHARE } from '../../local/fair-share';
import { LocalQueue } from '../../local/queue';
import { localS3EventMessage } from '../../local/bridge';
import { uploadGroupOf } from '../../lib/reconcile/s3-event';

interface M {
  id: string;
  groupId?: string;
  availableAt: number;
}

const fill = (list: FairReadyList<M>, group: string | undefined, n: number, prefix = group ?? 'x'): void => {
  for (let i = 0; i < n; i++) list.push({ id: `${prefix}${i}`, ...(group === undefined ? {} : { groupId: group }), availableAt: i });
};

describe('FairReadyList (the fair queue rule)', () => {
  it('hands out one group alone in arrival order', () => {
    // Arrange
    const list = new FairReadyList<M>(LOCAL_FAIR_SHARE);
    fill(list, 'A', 5);

    // Act
    const taken = list.take(3, () => 0, 0);

    // Assert
    expect(taken.map((m) => m.id)).toEqual(['A0', 'A1', 'A2']);
    expect(list.length).toBe(2);
  });

  it("serves a quiet client's messages first while another holds most of the work in flight", () => {
    // Arrange: A queued long before B, and A has 20 of the 20 messages in flight
    const list = new FairReadyList<M>(LOCAL_FAIR_SHARE);
    fill(list, 'A', 100);
    fill(list, 'B', 10);

    // Act
    const taken = list.take(10, (g) => (g === 'A' ? 20 : 0), 20);

    // Assert
    expect(taken.map((m) => m.groupId)).toEqual(Array(10).fill('B'));
  });

  it('takes the noisy client again once the quiet one has nothing waiting', () => {
    // Arrange
    const list = new FairReadyList<M>(LOCAL_FAIR_SHARE);
    fill(list, 'A', 100);
    fill(list, 'B', 3);

    // Act
    const taken = list.take(10, (g) => (g === 'A' ? 20 : 0), 20);

    // Assert
    expect(taken.map((m) => m.id)).toEqual(['B0', 'B1', 'B2', 'A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6']);
  });

  it('keeps arrival order while no client holds most of the work in flight', () => {
    // Arrange: A 4 in flight, B 4 in flight: neither holds more than half
    const list = new FairReadyList<M>(LOCAL_FAIR_SHARE);
    fill(list, 'A', 2);
    fill(list, 'B', 2);

    // Act
    const taken = list.take(4, () => 4, 8);

    // Assert: A0 and A1 first; each pick counts as in flight, so A turns noisy after its first and B1 goes before A1
    expect(taken.map((m) => m.id)).toEqual(['A0', 'B0', 'A1', 'B1']);
  });

  it('balances two busy clients: a batch taken while both have backlogs is split between them', () => {
    // Arrange
    const list = new FairReadyList<M>(LOCAL_FAIR_SHARE);
    fill(list, 'A', 50);
    fill(list, 'B', 50);

    // Act
    const taken = list.take(10, () => 0, 0);

    // Assert
    const fromA = taken.filter((m) => m.groupId === 'A').length;
    expect(fromA).toBe(5);
  });

  it('among noisy clients, serves the one with the fewest in flight first', () => {
    // Arrange: SQS's own thresholds; A has 60 in flight, B 40 (both noisy), no quiet client waiting
    const list = new FairReadyList<M>(SQS_FAIR_SHARE);
    fill(list, 'A', 5);
    fill(list, 'B', 5);

    // Act
    const [first] = list.take(1, (g) => (g === 'A' ? 60 : 40), 100);

    // Assert
    expect(first?.groupId).toBe('B');
  });

  it("under SQS's thresholds a client with fewer than 30 in flight is never noisy", () => {
    // Arrange
    const list = new FairReadyList<M>(SQS_FAIR_SHARE);
    fill(list, 'A', 3);
    fill(list, 'B', 3);

    // Act
    const taken = list.take(3, (g) => (g === 'A' ? 20 : 0), 20);

    // Assert: arrival order
    expect(taken.map((m) => m.id)).toEqual(['A0', 'A1', 'A2']);
  });

  it('treats each message without a group as a group of its own', () => {
    // Arrange
    const list = new FairReadyList<M>(LOCAL_FAIR_SHARE);
    fill(list, 'A', 5);
    fill(list, undefined, 2, 'n');

    // Act
    const taken = list.take(3, (g) => (g === 'A' ? 10 : 0), 10);

    // Assert
    expect(taken.map((m) => m.id)).toEqual(['n0', 'n1', 'A0']);
  });

  it('puts a message taken back first in line, and drains everything oldest first', () => {
    // Arrange
    const list = new FairReadyList<M>(LOCAL_FAIR_SHARE);
    fill(list, 'A', 2);
    fill(list, 'B', 1);
    const [first] = list.take(1, () => 0, 0);

    // Act
    list.unshift(first as M);

    // Assert
    expect(list.drain().map((m) => m.id)).toEqual(['A0', 'A1', 'B0']);
    expect(list.length).toBe(0);
  });

  it("serves a client with fewer images waiting or in work first, as the detector's pool counts them", () => {
    // Arrange: A has 8 images pending (2 running, 6 waiting), B 4 waiting that arrived later
    const list = new FairReadyList<M>(LOCAL_FAIR_SHARE);
    fill(list, 'A', 6);
    fill(list, 'B', 4);
    const pending = new Map([['A', 8], ['B', 4]]);

    // Act
    const [next] = list.take(1, (g) => pending.get(g) ?? 0, 12);

    // Assert
    expect(next?.id).toBe('B0');
  });

  it('without a rule, is a plain first-in first-out list', () => {
    // Arrange
    const list = new FairReadyList<M>(false);
    fill(list, 'A', 3);
    fill(list, 'B', 3);

    // Act
    const taken = list.take(4, (g) => (g === 'A' ? 100 : 0), 100);

    // Assert
    expect(taken.map((m) => m.id)).toEqual(['A0', 'A1', 'A2', 'B0']);
    expect(list.oldest()?.id).toBe('B1');
  });
});

describe('uploadGroupOf', () => {
  it("is the uploading client of an S3 notification's key", () => {
    // Arrange
    const body = localS3EventMessage({ operation: 'Put', bucket: 'b', key: 'uploads/acme/batch-1/cat 1.jpg', size: 1, eTag: 'e', sourceIp: '127.0.0.1', time: new Date(0) });

    // Act / Assert
    expect(uploadGroupOf(body)).toBe('acme');
  });

  it('is none for a key outside the upload layout or a body that is no notification', () => {
    expect(uploadGroupOf(localS3EventMessage({ operation: 'Put', bucket: 'b', key: 'uploads/only-client', size: 1, eTag: 'e', sourceIp: '127.0.0.1', time: new Date(0) }))).toBeUndefined();
    expect(uploadGroupOf('{"Event":"s3:TestEvent"}')).toBeUndefined();
  });
});

describe('LocalQueue fair share', () => {
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it("delivers a second client's messages before the first client's backlog", async () => {
    // Arrange: one batch of 2 at a time; each invocation waits until released
    const delivered: string[][] = [];
    const releases: (() => void)[] = [];
    const queue = new LocalQueue({
      batchSize: 2,
      batchWindowMs: 0,
      maxConcurrency: 2,
      // The batches' order alone (the slot beside them has tests of its own).
      quietSlot: false,
      paused: true,
      log: () => undefined,
      handler: async (event: SQSEvent) => {
        delivered.push(event.Records.map((r) => `${r.attributes.MessageGroupId}:${r.body}`));
        await new Promise<void>((resolve) => releases.push(resolve));
      },
    });
    for (let i = 0; i < 8; i++) queue.send(`a${i}`, { groupId: 'A' });
    queue.resume();
    queue.send('b0', { groupId: 'B' });
    queue.send('b1', { groupId: 'B' });

    // Act: the batches in flight finish one at a time
    while (!queue.idle) {
      await tick();
      releases.shift()?.();
    }

    // Assert
    expect(delivered).toEqual([['A:a0', 'A:a1'], ['A:a2', 'A:a3'], ['B:b0', 'B:b1'], ['A:a4', 'A:a5'], ['A:a6', 'A:a7']]);
    await queue.stop();
  });

  it("runs one more batch of a quiet client's messages while the noisy one holds every slot, and one only", async () => {
    // Arrange: one slot, held by A's batch until released
    const delivered: string[][] = [];
    const releases: (() => void)[] = [];
    const queue = new LocalQueue({
      batchSize: 10,
      batchWindowMs: 0,
      maxConcurrency: 1,
      log: () => undefined,
      handler: async (event: SQSEvent) => {
        delivered.push(event.Records.map((r) => r.body));
        await new Promise<void>((resolve) => releases.push(resolve));
      },
    });
    queue.send('a0', { groupId: 'A' });
    queue.send('a1', { groupId: 'A' });
    await tick();

    // Act: B arrives while A's batch runs and A still has a message waiting; then C while B's runs
    queue.send('b0', { groupId: 'B' });
    await tick();
    queue.send('c0', { groupId: 'C' });
    await tick();
    const whileHeld = delivered.map((batch) => [...batch]);
    while (!queue.idle) {
      releases.shift()?.();
      await tick();
    }

    // Assert: a0 in the slot, b0 beside it at once, c0 not (the extra slot is taken); once a0's batch is over A holds
    // nothing in flight, so a1 (older) and c0 share the freed slot
    expect(whileHeld).toEqual([['a0'], ['b0']]);
    expect(delivered.slice(2)).toEqual([['a1', 'c0']]);
    await queue.stop();
  });

  it('without the quiet slot, a quiet client waits for the noisy one\'s batch to end', async () => {
    // Arrange
    const delivered: string[][] = [];
    const releases: (() => void)[] = [];
    const queue = new LocalQueue({
      batchSize: 10,
      batchWindowMs: 0,
      maxConcurrency: 1,
      quietSlot: false,
      log: () => undefined,
      handler: async (event: SQSEvent) => {
        delivered.push(event.Records.map((r) => r.body));
        await new Promise<void>((resolve) => releases.push(resolve));
      },
    });
    queue.send('a0', { groupId: 'A' });
    await tick();

    // Act
    queue.send('b0', { groupId: 'B' });
    await tick();
    const whileHeld = delivered.length;
    while (!queue.idle) {
      releases.shift()?.();
      await tick();
    }

    // Assert
    expect([whileHeld, delivered]).toEqual([1, [['a0'], ['b0']]]);
    await queue.stop();
  });

  it('takes the group of an unlabelled message from groupOf, and keeps it across a restart from the journal', async () => {
    // Arrange
    const journalFile = path.join(mkdtempSync(path.join(tmpdir(), 'icecat-fair-')), 'queue.journal');
    const first = new LocalQueue({ paused: true, journalFile, handler: async () => undefined, groupOf: (body) => body.split(':')[0], log: () => undefined });
    first.send('acme:1');
    await first.stop(0);
    const groups: (string | undefined)[] = [];
    const second = new LocalQueue({ journalFile, batchWindowMs: 0, handler: async (event: SQSEvent) => void groups.push(...event.Records.map((r) => r.attributes.MessageGroupId)), log: () => undefined });

    // Act
    await second.whenIdle(10_000);

    // Assert
    expect(groups).toEqual(['acme']);
    await second.stop();
  });
});
