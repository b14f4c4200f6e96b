// What the ingest counts and times, through Powertools Metrics: CloudWatch Embedded Metric Format lines on stdout, so
// no PutMetricData call or permission. The pipeline sees only the IngestMetrics seam; tests inject their own.
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

export const METRICS_NAMESPACE = 'IceCatWrangler';

/** The pipeline's timed steps (docs/design.md §1). */
export type IngestStep = 'Read' | 'Fingerprint' | 'Claim' | 'Detect' | 'Record' | 'Move';

/** How one upload ended: an outcome of the pipeline, with the error code of a fail or a refusal. */
export type ImageOutcome = 'success' | 'duplicate' | 'fail' | 'refused' | 'redelivered' | 'deferred';

export interface IngestMetrics {
  /** One upload handled: `Images` with dimension Outcome (and ErrorCode for a fail or refusal). */
  image(outcome: ImageOutcome, errorCode?: string): void;
  /** A DetectLabels call made. */
  detectLabelsCall(): void;
  /** A DetectLabels call not made: the pixels were in the batch already, or classified for the client before. */
  callSaved(by: 'duplicate' | 'reuse'): void;
  stepLatency(step: IngestStep, ms: number): void;
  /** Writes what was stored since the last publish (once per invocation). */
  publish(): void;
}

export class PowertoolsIngestMetrics implements IngestMetrics {
  constructor(private readonly metrics: Metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'icecat-ingest' })) {}

  image(outcome: ImageOutcome, errorCode?: string): void {
    // Its own EMF document: its dimensions are not the invocation's.
    const single = this.metrics.singleMetric();
    single.addDimension('Outcome', outcome);
    if (errorCode !== undefined) single.addDimension('ErrorCode', errorCode);
    single.addMetric('Images', MetricUnit.Count, 1);
  }

  detectLabelsCall(): void {
    this.metrics.addMetric('DetectLabelsCalls', MetricUnit.Count, 1);
  }

  callSaved(by: 'duplicate' | 'reuse'): void {
    this.metrics.addMetric(by === 'duplicate' ? 'CallsSavedByDuplicates' : 'CallsSavedByReuse', MetricUnit.Count, 1);
  }

  stepLatency(step: IngestStep, ms: number): void {
    this.metrics.addMetric(`${step}Latency`, MetricUnit.Milliseconds, Math.round(ms * 100) / 100);
  }

  publish(): void {
    this.metrics.publishStoredMetrics();
  }
}

/** Runs one step and records how long it took, also when it throws. */
export async function timed<T>(metrics: IngestMetrics, step: IngestStep, run: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await run();
  } finally {
    metrics.stepLatency(step, performance.now() - start);
  }
}
