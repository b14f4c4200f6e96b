// The local status page's totals of EMF documents: what CloudWatch would sum per metric and dimension set.
import { dimensionLabel, MetricTotals, PERCENTILE_WINDOW } from '../../local/bridge/metric-totals';

const emf = (dimensions: string[][], metrics: [string, string][], values: Record<string, unknown>) => ({
  _aws: {
    Timestamp: 0,
    CloudWatchMetrics: [{ Namespace: 'IceCatWrangler', Dimensions: dimensions, Metrics: metrics.map(([Name, Unit]) => ({ Name, Unit })) }],
  },
  service: 'icecat-ingest',
  ...values,
});

it('sums counts per dimension values, arrays of values included, and ignores what is no EMF', () => {
  const totals = new MetricTotals();
  totals.add(emf([['service', 'Outcome']], [['Images', 'Count']], { Outcome: 'success', Images: 1 }));
  totals.add(emf([['service', 'Outcome']], [['Images', 'Count']], { Outcome: 'success', Images: 1 }));
  totals.add(emf([['service', 'Outcome', 'ErrorCode']], [['Images', 'Count']], { Outcome: 'fail', ErrorCode: 'NotAnImage', Images: 1 }));
  totals.add(emf([['service']], [['DetectLabelsCalls', 'Count']], { DetectLabelsCalls: [1, 1, 1] }));
  totals.add({ level: 'INFO', message: 'upload handled' });
  totals.add('not json');

  const { documents, totals: rows } = totals.snapshot();
  expect(documents).toBe(4);
  expect(rows.map((t) => [t.metric, dimensionLabel(t), t.count, t.sum])).toEqual([
    ['DetectLabelsCalls', '', 3, 3],
    ['Images', 'Outcome=fail ErrorCode=NotAnImage', 1, 1],
    ['Images', 'Outcome=success', 2, 2],
  ]);
  expect(rows[0]).not.toHaveProperty('p95');
});

it('gives timings count, avg, p50, p95 and max, percentiles over the latest values only', () => {
  const totals = new MetricTotals();
  const values = Array.from({ length: 100 }, (_, i) => i + 1);
  totals.add(emf([['service']], [['ReadLatency', 'Milliseconds']], { ReadLatency: values }));
  expect(totals.snapshot().totals[0]).toMatchObject({ count: 100, sum: 5050, avg: 50.5, p50: 50, p95: 95, max: 100 });

  totals.add(emf([['service']], [['ReadLatency', 'Milliseconds']], { ReadLatency: Array.from({ length: PERCENTILE_WINDOW }, () => 1) }));
  expect(totals.snapshot().totals[0]).toMatchObject({ count: 100 + PERCENTILE_WINDOW, p95: 1, max: 100 });
});

it('counts a metric under each dimension set its directive names', () => {
  const totals = new MetricTotals();
  totals.add(emf([['service'], ['service', 'Outcome']], [['Images', 'Count']], { Outcome: 'duplicate', Images: 1 }));
  expect(totals.snapshot().totals.map(dimensionLabel)).toEqual(['', 'Outcome=duplicate']);
});
