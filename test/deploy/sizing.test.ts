// The rules serverless.yml derives ingest settings by (scripts/sizing.cjs).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { rules } = require('../../scripts/sizing.cjs') as {
  rules: {
    maximumConcurrency(tps: number, secondsPerImage: number, imagesInFlight: number): number;
    visibilityTimeout(functionTimeout: number, maximumBatchingWindow: number): number;
  };
};

describe('ingest sizing rules', () => {
  it('allows the most concurrent invocations whose DetectLabels calls stay within the TPS', () => {
    expect(rules.maximumConcurrency(50, 1.5, 4)).toBe(18);
  });

  it('never sets fewer than the 2 concurrent invocations SQS event sources accept', () => {
    expect(rules.maximumConcurrency(1, 0.5, 4)).toBe(2);
  });

  it('never sets more than the 1000 concurrent invocations SQS event sources accept', () => {
    expect(rules.maximumConcurrency(5000, 2, 1)).toBe(1000);
  });

  it('hides a message for six function timeouts plus the batching window', () => {
    expect(rules.visibilityTimeout(120, 1)).toBe(721);
  });
});
