import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { uploadGroupOf } from '../../lib/reconcile/s3-event';
import { localS3EventMessage } from '../../local/bridge/bridge';
import { FairReadyList, LOCAL_FAIR_SHARE, POOL_FAIR_SHARE, RecentUse, SQS_FAIR_SHARE } from '../../local/queue/fair-share';
import { LocalQueue } from '../../local/queue/queue';

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

  it("serves first, as the detector's pool does, a client that used little of the workers' recent time, even with more images waiting", () => {
    // Arrange: A's 2 images wait, having used 8 s of worker time in the last seconds; B's 6 arrived later, B used 0.5 s
    const list = new FairReadyList<M>(POOL_FAIR_SHARE);
    fill(list, 'A', 2);
    fill(list, 'B', 6);
    const use = new RecentUse(5_000);
    use.add('A', 8_000, 0);
    use.add('B', 500, 0);

    // Act: one image per free worker, as the pool takes them
    const [next] = list.take(1, (g) => use.of(g, 0), use.total(0));

    // Assert
    expect(next?.id).toBe('B0');
  });

  it("serves the detector's clients in arrival order once neither used most of the workers' recent time", () => {
    // Arrange
    const list = new FairReadyList<M>(POOL_FAIR_SHARE);
    fill(list, 'A', 2);
    fill(list, 'B', 2);
    const use = new RecentUse(5_000);
    use.add('A', 1_000, 0);
    use.add('B', 1_000, 0);

    // Act
    const [next] = list.take(1, (g) => use.of(g, 0), use.total(0));

    // Assert
    expect(next?.id).toBe('A0');
  });

  it("counts the quiet groups' waiting messages and the oldest one's time, not the noisy group's nor lone messages'", () => {
    // Arrange: A noisy (8 of 10 in flight), B and C quiet; a message without a group
    const list = new FairReadyList<M>(LOCAL_FAIR_SHARE);
    list.push({ id: 'a0', groupId: 'A', availableAt: 1 });
    list.push({ id: 'x0', availableAt: 2 });
    list.push({ id: 'b0', groupId: 'B', availableAt: 5 });
    list.push({ id: 'b1', groupId: 'B', availableAt: 6 });
    list.push({ id: 'c0', groupId: 'C', availableAt: 4 });
    const inFlight = new Map([
      ['A', 8],
      ['B', 2],
    ]);

    // Act
    const quiet = list.quietWaiting((g) => inFlight.get(g) ?? 0, 10);

    // Assert
    expect(quiet).toEqual({ count: 3, oldestAvailableAt: 4 });
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

describe("RecentUse (the detector pool's measure: worker time per client)", () => {
  it("halves a client's time every half-life, and counts an image in a worker as used so far", () => {
    // Arrange
    const use = new RecentUse(1_000);
    const image = {};

    // Act
    use.add('A', 800, 0);
    use.start(image, 'B', 1_000);
    const running = [use.of('A', 1_000), use.of('B', 1_300), use.total(1_300)];
    use.end(image, 1_500);

    // Assert: A's 800 ms are 400 a half-life later; B's image counts 300 ms while running and 500 once over
    expect(running.map(Math.round)).toEqual([400, 300, Math.round(800 * 2 ** -1.3 + 300)]);
    expect(use.of('B', 1_500)).toBe(500);
  });

  it('forgets a client whose time decayed below a millisecond', () => {
    // Arrange
    const use = new RecentUse(1_000);
    use.add('A', 4, 0);

    // Act: three half-lives later 0.5 ms are left
    const left = use.of('A', 3_000);

    // Assert
    expect([left, use.total(3_000)]).toEqual([0, 0]);
  });
});

describe('uploadGroupOf', () => {
  it("is the uploading client of an S3 notification's key", () => {
    // Arrange
    const body = localS3EventMessage({
      operation: 'Put',
      bucket: 'b',
      key: 'uploads/acme/batch-1/cat 1.jpg',
      size: 1,
      eTag: 'e',
      sourceIp: '127.0.0.1',
      time: new Date(0),
    });

    // Act / Assert
    expect(uploadGroupOf(body)).toBe('acme');
  });

  it('is none for a key outside the upload layout or a body that is no notification', () => {
    expect(
      uploadGroupOf(
        localS3EventMessage({
          operation: 'Put',
          bucket: 'b',
          key: 'uploads/only-client',
          size: 1,
          eTag: 'e',
          sourceIp: '127.0.0.1',
          time: new Date(0),
        }),
      ),
    ).toBeUndefined();
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
    expect(delivered).toEqual([
      ['A:a0', 'A:a1'],
      ['A:a2', 'A:a3'],
      ['B:b0', 'B:b1'],
      ['A:a4', 'A:a5'],
      ['A:a6', 'A:a7'],
    ]);
    await queue.stop();
  });

  it("runs batches of quiet clients' messages beside the slots the noisy one holds, up to maxQuietBatches", async () => {
    // Arrange: one slot, held by A's batch of 3 until released; at most two quiet batches beside it
    const delivered: string[][] = [];
    const releases: (() => void)[] = [];
    const queue = new LocalQueue({
      batchSize: 3,
      batchWindowMs: 0,
      maxConcurrency: 1,
      maxQuietBatches: 2,
      paused: true,
      log: () => undefined,
      handler: async (event: SQSEvent) => {
        delivered.push(event.Records.map((r) => r.body));
        await new Promise<void>((resolve) => releases.push(resolve));
      },
    });
    for (let i = 0; i < 4; i++) queue.send(`a${i}`, { groupId: 'A' });
    queue.resume();
    await tick();

    // Act: B arrives while A's batch runs and A still has a message waiting; then C, then D, one at a time
    for (const quiet of ['b0', 'c0', 'd0']) {
      queue.send(quiet, { groupId: quiet.toUpperCase().slice(0, 1) });
      await tick();
    }
    const whileHeld = delivered.map((batch) => [...batch]);
    while (!queue.idle) {
      releases.shift()?.();
      await tick();
    }

    // Assert: A's first three in the slot, b0 and c0 beside it at once (A holds 3 of 4, then of 5, in flight: noisy),
    // d0 not (both quiet batches run); once A's batch is over A holds nothing in flight, so a3 (older) and d0 share
    // the freed slot
    expect(whileHeld).toEqual([['a0', 'a1', 'a2'], ['b0'], ['c0']]);
    expect(delivered.slice(3)).toEqual([['a3', 'd0']]);
    await queue.stop();
  });

  it("fills a quiet batch from the quiet clients' messages while the batching window is open, whatever the noisy backlog", async () => {
    // Arrange: two slots held by A, a backlog of A's bigger than a batch, and a window that never ends within the test
    const delivered: string[][] = [];
    const releases: (() => void)[] = [];
    const queue = new LocalQueue({
      batchSize: 3,
      batchWindowMs: 3_600_000,
      maxConcurrency: 2,
      paused: true,
      log: () => undefined,
      handler: async (event: SQSEvent) => {
        delivered.push(event.Records.map((r) => r.body));
        await new Promise<void>((resolve) => releases.push(resolve));
      },
    });
    for (let i = 0; i < 10; i++) queue.send(`a${i}`, { groupId: 'A' });
    queue.resume();
    await tick();

    // Act: B's messages come one at a time
    const seen: number[] = [];
    for (const b of ['b0', 'b1', 'b2']) {
      queue.send(b, { groupId: 'B' });
      await tick();
      seen.push(delivered.length);
    }

    // Assert: no quiet batch of b0 alone, nor of b0 and b1; the third fills it
    expect(seen).toEqual([2, 2, 3]);
    expect(delivered).toEqual([
      ['a0', 'a1', 'a2'],
      ['a3', 'a4', 'a5'],
      ['b0', 'b1', 'b2'],
    ]);
    while (releases.length > 0) releases.shift()?.();
    await queue.stop(0);
  });

  it("gives a slot the noisy client's batch frees to its next batch while a quiet batch still runs", async () => {
    // Arrange: one slot; batches are released by name
    const delivered: string[][] = [];
    const releases = new Map<string, () => void>();
    const queue = new LocalQueue({
      batchSize: 1,
      batchWindowMs: 0,
      maxConcurrency: 1,
      log: () => undefined,
      handler: async (event: SQSEvent) => {
        const bodies = event.Records.map((r) => r.body);
        delivered.push(bodies);
        await new Promise<void>((resolve) => releases.set(bodies[0] as string, resolve));
      },
    });
    queue.send('a0', { groupId: 'A' });
    queue.send('a1', { groupId: 'A' });
    await tick();
    queue.send('b0', { groupId: 'B' });
    await tick();

    // Act: A's batch ends, B's quiet batch still runs
    releases.get('a0')?.();
    await tick();
    await tick();

    // Assert: a1 runs at once, beside b0
    expect(delivered).toEqual([['a0'], ['b0'], ['a1']]);
    releases.get('b0')?.();
    releases.get('a1')?.();
    await queue.whenIdle(10_000);
    await queue.stop();
  });

  it("without the quiet slot, a quiet client waits for the noisy one's batch to end", async () => {
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
    const first = new LocalQueue({
      paused: true,
      journalFile,
      handler: async () => undefined,
      groupOf: (body) => body.split(':')[0],
      log: () => undefined,
    });
    first.send('acme:1');
    await first.stop(0);
    const groups: (string | undefined)[] = [];
    const second = new LocalQueue({
      journalFile,
      batchWindowMs: 0,
      handler: async (event: SQSEvent) => void groups.push(...event.Records.map((r) => r.attributes.MessageGroupId)),
      log: () => undefined,
    });

    // Act
    await second.whenIdle(10_000);

    // Assert
    expect(groups).toEqual(['acme']);
    await second.stop();
  });
});
