// What the ingest counts and times, through Powertools Metrics: CloudWatch Embedded Metric Format lines on stdout, so
// no PutMetricData call or permission. The pipeline sees only the IngestMetrics seam; tests inject their own.
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { EmfOutput } from '@aws-lambda-powertools/metrics/types';
import type { DetectLabelsOutcome } from './detect';

export const METRICS_NAMESPACE = 'IceCatWrangler';

/** The pipeline's timed steps (docs/design.md §1). */
type IngestStep = 'Read' | 'Fingerprint' | 'Claim' | 'Thumbnail' | 'Detect' | 'Record' | 'Move';

/** How one upload ended: an outcome of the pipeline, with the error code of a fail or a refusal. */
type ImageOutcome = 'success' | 'duplicate' | 'fail' | 'refused' | 'redelivered' | 'deferred';

export interface IngestMetrics {
  /** One upload handled: `Images` with dimension Outcome (and ErrorCode for a fail or refusal). */
  image(outcome: ImageOutcome, errorCode?: string): void;
  /** A DetectLabels call made. */
  detectLabelsCall(): void;
  /**
   * One DetectLabels request ended: `DetectLabelsRequests` with dimension Outcome (ok, throttled, refused, failed), and
   * its wall time, the SDK's retries included, as `DetectLabelsLatency`.
   */
  detectLabelsRequest(outcome: DetectLabelsOutcome, ms: number): void;
  /** A DetectLabels call not made: the pixels were in the batch already, or classified for the client before. */
  callSaved(by: 'duplicate' | 'reuse'): void;
  stepLatency(step: IngestStep, ms: number): void;
  /** A thumbnail that could not be stored (the image went on without it). */
  thumbnailFailed(): void;
  /** Writes what was stored since the last publish (once per invocation). */
  publish(): void;
}

/** Receives each EMF document as it is written to stdout. */
type EmfListener = (document: EmfOutput) => void;

/**
 * Who else reads the EMF documents: the local stack runs the ingest in-process and totals its metrics for its status
 * page, handing this to the ingest's metrics through its deps. On AWS nothing listens and the output is Powertools' own.
 */
interface EmfScope {
  listener: EmfListener;
  /** Whether the document is still written to stdout (false for a quiet stack, such as the one the tests share). */
  echo: boolean;
}

type MetricsOptions = NonNullable<ConstructorParameters<typeof Metrics>[0]>;

/** Powertools Metrics that also hand each document it writes to a listener, if given one. */
export class ListenedMetrics extends Metrics {
  constructor(
    private readonly options: MetricsOptions,
    private readonly scope?: EmfScope,
  ) {
    super(options);
  }

  override publishStoredMetrics(): this {
    const scope = this.scope;
    // Exactly what is written: nothing when disabled or empty.
    if (scope && !this.isDisabled() && this.hasStoredMetrics()) scope.listener(this.serializeMetrics());
    if (scope?.echo !== false) return super.publishStoredMetrics();
    // What Powertools does after writing, without the writing.
    this.clearMetrics();
    this.clearDimensions();
    this.clearMetadata();
    return this;
  }

  // Powertools' own builds a plain Metrics, whose document no listener would see.
  override singleMetric(): ListenedMetrics {
    return new ListenedMetrics({ ...this.options, singleMetric: true }, this.scope);
  }
}

export class PowertoolsIngestMetrics implements IngestMetrics {
  constructor(private readonly metrics: Metrics = new ListenedMetrics({ namespace: METRICS_NAMESPACE, serviceName: 'icecat-ingest' })) {}

  /** The ingest's metrics with a listener of their EMF documents (the local stack's). */
  static listenedBy(scope: EmfScope): PowertoolsIngestMetrics {
    return new PowertoolsIngestMetrics(new ListenedMetrics({ namespace: METRICS_NAMESPACE, serviceName: 'icecat-ingest' }, scope));
  }

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

  detectLabelsRequest(outcome: DetectLabelsOutcome, ms: number): void {
    // By outcome in its own document (as Images); the latency with the invocation's, whose values CloudWatch keeps
    // for percentiles.
    const single = this.metrics.singleMetric();
    single.addDimension('Outcome', outcome);
    single.addMetric('DetectLabelsRequests', MetricUnit.Count, 1);
    this.metrics.addMetric('DetectLabelsLatency', MetricUnit.Milliseconds, Math.round(ms * 100) / 100);
  }

  callSaved(by: 'duplicate' | 'reuse'): void {
    this.metrics.addMetric(by === 'duplicate' ? 'CallsSavedByDuplicates' : 'CallsSavedByReuse', MetricUnit.Count, 1);
  }

  stepLatency(step: IngestStep, ms: number): void {
    this.metrics.addMetric(`${step}Latency`, MetricUnit.Milliseconds, Math.round(ms * 100) / 100);
  }

  thumbnailFailed(): void {
    this.metrics.addMetric('ThumbnailFailures', MetricUnit.Count, 1);
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
