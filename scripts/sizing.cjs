// Settings that serverless.yml derives from others (osls variables cannot do arithmetic).
// osls resolves each as ${file(./scripts/sizing.cjs):<name>}; the pure rules are exported for tests.

/**
 * One ingest invocation works on `imagesInFlight` images at a time, each taking `secondsPerImage` and making at
 * most one DetectLabels call, so C concurrent invocations call DetectLabels about C × imagesInFlight /
 * secondsPerImage times a second. The largest C within `tps` is floor(tps × secondsPerImage / imagesInFlight);
 * SQS event sources accept 2..1000.
 */
function maximumConcurrency(tps, secondsPerImage, imagesInFlight) {
  return Math.min(1000, Math.max(2, Math.floor((tps * secondsPerImage) / imagesInFlight)));
}

/** AWS: a queue's visibility timeout should be at least six times the function's timeout plus the batching window. */
function visibilityTimeout(functionTimeout, maximumBatchingWindow) {
  return 6 * functionTimeout + maximumBatchingWindow;
}

async function number(resolveVariable, address, { min = Number.MIN_VALUE } = {}) {
  const value = Number(await resolveVariable(address));
  if (!Number.isFinite(value) || value < min) throw new Error(`${address} must be a number >= ${min}`);
  return value;
}

module.exports = {
  rules: { maximumConcurrency, visibilityTimeout },
  maximumConcurrency: async ({ resolveVariable }) =>
    maximumConcurrency(
      await number(resolveVariable, 'self:custom.rekognition.tps'),
      await number(resolveVariable, 'self:custom.rekognition.secondsPerImage'),
      await number(resolveVariable, 'self:custom.ingest.imagesInFlight'),
    ),
  visibilityTimeout: async ({ resolveVariable }) =>
    visibilityTimeout(
      await number(resolveVariable, 'self:custom.ingest.timeout'),
      await number(resolveVariable, 'self:custom.ingest.maximumBatchingWindow', { min: 0 }),
    ),
};
