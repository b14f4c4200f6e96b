// The detector's pool of workers: its size from the environment, and workers that crash or hang replaced with the
// image retried. The workers are real (worker threads loading the model).
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../lib/config';
import { detectorSettingsFromEnvironment, startDetectorFromEnvironment } from '../../local/detector/from-environment';
import { DetectorPool } from '../../local/detector/pool';
import { detectorWorkers } from '../../local/detector/settings';

const chelsea = readFileSync(path.join(__dirname, '..', 'fixtures', 'chelsea.png'));

function withWorkersEnv<T>(value: string | undefined, fn: () => T): T {
  const saved = process.env.ICECAT_DETECTOR_WORKERS;
  if (value === undefined) delete process.env.ICECAT_DETECTOR_WORKERS;
  else process.env.ICECAT_DETECTOR_WORKERS = value;
  try {
    return fn();
  } finally {
    if (saved === undefined) delete process.env.ICECAT_DETECTOR_WORKERS;
    else process.env.ICECAT_DETECTOR_WORKERS = saved;
  }
}

describe('ICECAT_DETECTOR_WORKERS', () => {
  test('unset, the pool has one worker per available core', () => {
    // Act
    const workers = withWorkersEnv(undefined, () => detectorSettingsFromEnvironment().workers);

    // Assert
    expect(workers).toBe(Math.min(64, availableParallelism()));
  });

  test('a count in 1..64 is taken', () => {
    // Act
    const workers = withWorkersEnv('3', () => detectorSettingsFromEnvironment().workers);

    // Assert
    expect(workers).toBe(3);
  });

  test.each(['0', 'abc', '65', '2.5', '-1'])('%s is refused, naming the variable and its range', (value) => {
    // Act
    const read = (): number => withWorkersEnv(value, () => detectorSettingsFromEnvironment().workers);

    // Assert
    expect(read).toThrow(new ConfigError(`environment variable ICECAT_DETECTOR_WORKERS must be an integer in 1..64, got "${value}"`));
  });

  test('the endpoint refuses to start with ICECAT_DETECTOR_WORKERS=0', async () => {
    // Act
    const starting = withWorkersEnv('0', () => startDetectorFromEnvironment({ port: 0 }));

    // Assert
    await expect(starting).rejects.toThrow(/ICECAT_DETECTOR_WORKERS must be an integer in 1\.\.64, got "0"/);
  });

  test('a workers option out of range is refused', () => {
    // Act
    const read = (): number => detectorWorkers(65);

    // Assert
    expect(read).toThrow(ConfigError);
  });
});

/** The pool's settings as a detector started from the environment has them (the test overrides the workers). */
const poolSettings = () => {
  const { model, modelCache, taskTimeoutMs } = detectorSettingsFromEnvironment();
  return { model, modelCache, taskTimeoutMs };
};

describe('DetectorPool', () => {
  let pool: DetectorPool | undefined;
  const lines: string[] = [];

  afterEach(async () => {
    await pool?.close();
    pool = undefined;
    lines.length = 0;
  });

  test('two workers answer two images at once, as one worker does', async () => {
    // Arrange
    pool = await DetectorPool.start({ ...poolSettings(), workers: 2, log: (line) => lines.push(line) });

    // Act
    const [a, b] = await Promise.all([pool.detect(chelsea), pool.detect(chelsea)]);

    // Assert
    expect(pool.stats().workers).toBe(2);
    expect(a).toEqual(b);
    expect(a.some((d) => d.classIndex === 15)).toBe(true);
  });

  test('a worker that crashes on an image is replaced and the image retried on another', async () => {
    // Arrange
    pool = await DetectorPool.start({ ...poolSettings(), workers: 1, log: (line) => lines.push(line) });
    const expected = await pool.detect(chelsea);

    // Act
    const detections = await pool.detect(chelsea, 'crash');

    // Assert
    expect(detections).toEqual(expected);
    expect(pool.stats()).toMatchObject({ workers: 1, replaced: 1, retried: 1, pending: 0 });
    expect(lines.join('\n')).toMatch(/a worker exited with code 70 on image #2 \(attempt 1\): replacing it/);
  });

  test('a worker that hangs past the task timeout is stopped, replaced, and the image retried', async () => {
    // Arrange
    pool = await DetectorPool.start({ ...poolSettings(), workers: 1, taskTimeoutMs: 5000, log: (line) => lines.push(line) });
    const expected = await pool.detect(chelsea);

    // Act
    const detections = await pool.detect(chelsea, 'hang');

    // Assert
    expect(detections).toEqual(expected);
    expect(pool.stats()).toMatchObject({ workers: 1, replaced: 1, retried: 1, pending: 0 });
    expect(lines.join('\n')).toMatch(/took over 5000 ms on image #2: stopping it/);
  });

  test('images waiting behind a crashed worker are all answered', async () => {
    // Arrange
    pool = await DetectorPool.start({ ...poolSettings(), workers: 2, log: (line) => lines.push(line) });

    // Act
    const results = await Promise.all([
      pool.detect(chelsea, 'crash'),
      pool.detect(chelsea),
      pool.detect(chelsea, 'crash'),
      pool.detect(chelsea),
    ]);

    // Assert
    expect(results.every((r) => r.some((d) => d.classIndex === 15))).toBe(true);
    expect(pool.stats()).toMatchObject({ workers: 2, replaced: 2, retried: 2, pending: 0 });
  });

  test('a bad image is answered with the detector error, and the worker lives on', async () => {
    // Arrange
    pool = await DetectorPool.start({ ...poolSettings(), workers: 1, log: (line) => lines.push(line) });

    // Act
    const bad = pool.detect(Buffer.from([0xff, 0xd8, 0xff, 0x00, 0x01]));

    // Assert
    await expect(bad).rejects.toMatchObject({ type: 'InvalidImageFormatException' });
    expect((await pool.detect(chelsea)).length).toBeGreaterThan(0);
    expect(pool.stats().replaced).toBe(0);
  });

  test('close() refuses waiting images and later ones', async () => {
    // Arrange
    pool = await DetectorPool.start({ ...poolSettings(), workers: 1, log: (line) => lines.push(line) });
    const running = pool.detect(chelsea).catch((err: unknown) => err);

    // Act
    await pool.close();

    // Assert
    expect(await running).toMatchObject({ type: 'InternalServerError' });
    await expect(pool.detect(chelsea)).rejects.toMatchObject({ type: 'InternalServerError' });
  });
});
