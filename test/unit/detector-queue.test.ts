import { QueueFullError, SerialQueue } from '../../local/detector/queue';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SerialQueue', () => {
  test('tasks run one at a time', async () => {
    // Arrange
    const queue = new SerialQueue();
    let running = 0;
    let most = 0;
    const task = async (): Promise<void> => {
      running += 1;
      most = Math.max(most, running);
      await tick();
      running -= 1;
    };

    // Act
    await Promise.all([queue.run(task), queue.run(task), queue.run(task)]);

    // Assert
    expect(most).toBe(1);
  });

  test('tasks run in the order they arrived', async () => {
    // Arrange
    const queue = new SerialQueue();
    const order: number[] = [];

    // Act
    await Promise.all([1, 2, 3].map((n) => queue.run(async () => void order.push(n))));

    // Assert
    expect(order).toEqual([1, 2, 3]);
  });

  test('a failed task does not stop the ones after it', async () => {
    // Arrange
    const queue = new SerialQueue();
    const failing = queue.run(async () => {
      throw new Error('boom');
    });

    // Act
    const next = await queue.run(async () => 'ran');

    // Assert
    await expect(failing).rejects.toThrow('boom');
    expect(next).toBe('ran');
  });

  test('a full queue refuses new tasks', async () => {
    // Arrange
    const queue = new SerialQueue(1);
    const first = queue.run(tick);

    // Act
    const second = queue.run(tick);

    // Assert
    await expect(second).rejects.toBeInstanceOf(QueueFullError);
    await first;
  });

  test('pending counts accepted tasks until they finish', async () => {
    // Arrange
    const queue = new SerialQueue();
    const done = Promise.all([queue.run(tick), queue.run(tick)]);

    // Act
    const during = queue.pending;
    await done;

    // Assert
    expect([during, queue.pending]).toEqual([2, 0]);
  });
});
