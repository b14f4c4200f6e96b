// What the ingest counts and times, through Powertools Metrics: CloudWatch Embedded Metric Format lines on stdout, so
// no PutMetricData call or permission. The pipeline sees only the IngestMetrics seam; tests inject their own.
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { EmfOutput } from '@aws-lambda-powertools/metrics/types';
import { AsyncLocalStorage } from 'node:async_hooks';

export const METRICS_NAMESPACE = 'IceCatWrangler';

/** The pipeline's timed steps (docs/design.md §1). */
export type IngestStep = 'Read' | 'Fingerprint' | 'Claim' | 'Thumbnail' | 'Detect' | 'Record' | 'Move';

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
  /** A thumbnail that could not be stored (the image went on without it). */
  thumbnailFailed(): void;
  /** Writes what was stored since the last publish (once per invocation). */
  publish(): void;
}

/** Receives each EMF document as it is written to stdout. */
export type EmfListener = (document: EmfOutput) => void;

// The local stack runs the ingest in-process and totals its metrics for its status page: it runs each invocation
// inside withEmfListener. On AWS nothing listens and the output is Powertools' own. On globalThis: the stack and the
// handler it imports may hold separate module instances of this file.
interface EmfScope {
  listener: EmfListener;
  /** Whether the document is still written to stdout (false for a quiet stack, such as the one the tests share). */
  echo: boolean;
}
const LISTENER = Symbol.for('icecat.emfListener');
const listenerScope = (): AsyncLocalStorage<EmfScope> =>
  ((globalThis as Record<symbol, AsyncLocalStorage<EmfScope>>)[LISTENER] ??= new AsyncLocalStorage<EmfScope>());

/**
 * Runs `run` with `listener` receiving every EMF document the ingest writes within it (its async continuations too).
 * With `echo: false` the listener gets the documents instead of stdout.
 */
export function withEmfListener<T>(listener: EmfListener, run: () => T, options: { echo?: boolean } = {}): T {
  return listenerScope().run({ listener, echo: options.echo ?? true }, run);
}

type MetricsOptions = NonNullable<ConstructorParameters<typeof Metrics>[0]>;

/** Powertools Metrics that also hand each document it writes to the listener in scope, if any. */
export class ListenedMetrics extends Metrics {
  constructor(private readonly options: MetricsOptions) {
    super(options);
  }

  override publishStoredMetrics(): this {
    const scope = listenerScope().getStore();
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
    return new ListenedMetrics({ ...this.options, singleMetric: true });
  }
}

export class PowertoolsIngestMetrics implements IngestMetrics {
  constructor(
    private readonly metrics: Metrics = new ListenedMetrics({ namespace: METRICS_NAMESPACE, serviceName: 'icecat-ingest' }),
  ) {}

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
