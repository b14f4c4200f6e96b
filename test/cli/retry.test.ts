import { backoffMs, type RetryPolicy, retryAfterMs, TransientError, withRetry } from '../../lib/cli/retry';

const POLICY: RetryPolicy = { attempts: 4, baseMs: 100, maxMs: 1_000 };

function recorder() {
  const waits: number[] = [];
  return { waits, hooks: { sleep: async (ms: number) => void waits.push(ms), random: () => 1 } };
}

describe('withRetry', () => {
  it('retries a transient failure and returns the later success', async () => {
    const { waits, hooks } = recorder();
    let calls = 0;

    const value = await withRetry(
      async () => {
        if (++calls < 3) throw new TransientError('503');
        return 'ok';
      },
      POLICY,
      hooks,
    );

    expect(value).toBe('ok');
    expect(calls).toBe(3);
    expect(waits).toEqual([100, 200]);
  });

  it('gives up after the policy’s attempts with the last failure', async () => {
    const { waits, hooks } = recorder();
    let calls = 0;

    const run = withRetry(
      async () => {
        throw new TransientError(`attempt ${++calls}`);
      },
      POLICY,
      hooks,
    );

    await expect(run).rejects.toThrow('attempt 4');
    expect(waits).toEqual([100, 200, 400]);
  });

  it('does not retry a permanent failure', async () => {
    const { waits, hooks } = recorder();
    let calls = 0;

    const run = withRetry(
      async () => {
        calls++;
        throw new Error('403 policy');
      },
      POLICY,
      hooks,
    );

    await expect(run).rejects.toThrow('403 policy');
    expect(calls).toBe(1);
    expect(waits).toEqual([]);
  });

  it('waits at least what Retry-After asked, within the cap', async () => {
    const { waits, hooks } = recorder();
    let calls = 0;

    await withRetry(
      async () => {
        if (++calls === 1) throw new TransientError('429', { retryAfterMs: 700 });
        if (calls === 2) throw new TransientError('429', { retryAfterMs: 60_000 });
      },
      POLICY,
      hooks,
    );

    expect(waits).toEqual([700, 1_000]);
  });
});

describe('backoffMs', () => {
  it('doubles per attempt up to the cap, scaled by the jitter draw', () => {
    expect([1, 2, 3, 4, 5].map((a) => backoffMs(a, POLICY, () => 1))).toEqual([100, 200, 400, 800, 1_000]);
    expect(backoffMs(3, POLICY, () => 0.5)).toBe(200);
    expect(backoffMs(3, POLICY, () => 0)).toBe(0);
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates, and ignores garbage', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');

    expect(retryAfterMs('3', now)).toBe(3_000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5_000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});
