// Counts the ingest reports to CloudWatch as Embedded Metric Format lines on stdout (what Powertools' Metrics
// writes), so no PutMetricData call, permission or dependency is needed.

export const METRICS_NAMESPACE = 'IceCatWrangler';

export type IngestMetric = 'UnknownClientUploads' | 'InvalidKeyUploads' | 'DeletedBatchUploads';

export type MetricSink = (metric: IngestMetric, dimensions?: Record<string, string>) => void;

/** One EMF document for one count of `metric`. */
export function emfLine(metric: IngestMetric, dimensions: Record<string, string> = {}, nowMs: number = Date.now()): string {
  return JSON.stringify({
    _aws: {
      Timestamp: nowMs,
      CloudWatchMetrics: [{ Namespace: METRICS_NAMESPACE, Dimensions: [Object.keys(dimensions)], Metrics: [{ Name: metric, Unit: 'Count' }] }],
    },
    ...dimensions,
    [metric]: 1,
  });
}

export const emfMetrics: MetricSink = (metric, dimensions) => {
  process.stdout.write(`${emfLine(metric, dimensions)}\n`);
};
