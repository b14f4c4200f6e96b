// Runs before each integration and browser test file: points it at the stack of the jest worker it runs in
// (test/global-setup.ts started one per worker), so that two files running at once never share a stack.

/** Applies the environment of this worker's stack among `stacks` (JSON, one per worker), if any. */
export function applyWorkerStack(stacks: string | undefined): void {
  if (!stacks) return;
  const envs = JSON.parse(stacks) as Record<string, string>[];
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  Object.assign(process.env, envs[(worker - 1) % envs.length]);
}

applyWorkerStack(process.env.ICECAT_TEST_STACKS);
