// The ingest's bound on records in flight (lib/ingest/bounded.ts): counted, never timed.
import { boundedBy } from '../../lib/ingest/bounded';

/** A task that stays running until its release() is called. */
function gate(): { promise: Promise<void>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

it('runs at most the limit at once, the others in the order they came, each as soon as a slot frees', async () => {
  const slot = boundedBy(2);
  const gates = Array.from({ length: 5 }, gate);
  const started: number[] = [];
  let running = 0;
  let most = 0;
  const all = gates.map((g, i) =>
    slot(async () => {
      started.push(i);
      running++;
      most = Math.max(most, running);
      await g.promise;
      running--;
      return i;
    }),
  );
  await Promise.resolve();
  expect(started).toEqual([0, 1]);
  gates[1]!.release();
  await new Promise((resolve) => setImmediate(resolve));
  expect(started).toEqual([0, 1, 2]);
  for (const g of gates) g.release();
  expect(await Promise.all(all)).toEqual([0, 1, 2, 3, 4]);
  expect(most).toBe(2);
});

it('frees the slot of a task that throws', async () => {
  const slot = boundedBy(1);
  await expect(slot(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  expect(await slot(async () => 'next')).toBe('next');
});
