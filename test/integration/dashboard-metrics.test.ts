// The dashboard and the alarms name only metrics the code emits (docs/design.md §14): every metric of the project's
// namespace that the packaged template names appears in an EMF document written in a local run — the ingest's on the
// shared local stack (an upload classified by the local detector, and one that is no image), the expiry sweep's and
// the callbacks' from their own handlers. AWS/* metrics are AWS's own and not checked here.

import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { createCallbacksHandler } from '../../functions/callbacks/app';
import { METRICS_NAMESPACE } from '../../lib/ingest/metrics';
import { CALLBACK_MESSAGE_TYPE, encodeCallbackMessage } from '../../lib/notify/job';
import type { MetricTotalsSnapshot } from '../../local/bridge/metric-totals';
import { ensureTable } from '../../local/dynamodb/dynamodb';
import { loadTableInput } from '../../local/dynamodb/table-definition';
import { ensurePackaged } from '../deploy/packaged';
import { bridgeStats, stackEnv, uniqueId, uploadFile, waitForBridgeIdle } from '../helpers';
import { emfWrittenBy } from '../helpers/emf';
import { distinctImages, seededRandom } from '../helpers/stack-process';

jest.setTimeout(300_000);

type Row = (string | Record<string, unknown>)[];

/** Metric names of the namespace in a list of dashboard rows or a SEARCH expression. */
function namesInRows(rows: Row[]): string[] {
  return rows.flatMap((row) => {
    if (row[0] === METRICS_NAMESPACE && typeof row[1] === 'string') return [row[1]];
    const expression = (row.find((c) => typeof c === 'object') as { expression?: string } | undefined)?.expression ?? '';
    if (!expression.includes(`{${METRICS_NAMESPACE},`)) return [];
    return [...expression.matchAll(/MetricName="(\w+)"/g)].map((m) => m[1] as string);
  });
}

type Dimension = { Name: string; Value: unknown };

interface AlarmProps {
  Namespace?: string;
  MetricName?: string;
  Dimensions?: Dimension[];
  Metrics?: { MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions?: Dimension[] } } }[];
}

/** A metric as CloudWatch keys it, but for the dimension values other than the service's: `Name|dim,dim|service`. */
const shape = (metric: string, dimensions: Record<string, unknown>): string =>
  `${metric}|${Object.keys(dimensions).sort().join(',')}|${String(dimensions.service)}`;
const dimensionsOf = (list: Dimension[] = []): Record<string, unknown> => Object.fromEntries(list.map((d) => [d.Name, d.Value]));

async function namedInTemplate(): Promise<{ dashboard: string[]; alarms: string[]; alarmShapes: string[] }> {
  const { template } = await ensurePackaged();
  const body = JSON.parse((template.Resources.Dashboard?.Properties.DashboardBody as { 'Fn::Sub': string })['Fn::Sub']) as {
    widgets: { properties: { metrics?: Row[] } }[];
  };
  const dashboard = body.widgets.flatMap((w) => namesInRows(w.properties.metrics ?? []));
  const watched = Object.values(template.Resources)
    .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
    .flatMap((r) => {
      const p = r.Properties as AlarmProps;
      const single = p.Namespace === METRICS_NAMESPACE && p.MetricName ? [{ MetricName: p.MetricName, Dimensions: p.Dimensions }] : [];
      const math = (p.Metrics ?? []).flatMap((m) => (m.MetricStat?.Metric.Namespace === METRICS_NAMESPACE ? [m.MetricStat.Metric] : []));
      return [...single, ...math];
    });
  return {
    dashboard: [...new Set(dashboard)].sort(),
    alarms: [...new Set(watched.map((m) => m.MetricName))].sort(),
    alarmShapes: [...new Set(watched.map((m) => shape(m.MetricName, dimensionsOf(m.Dimensions))))].sort(),
  };
}

/** Each metric of the namespace in the documents, under each of its dimension sets, as `shape` writes it. */
const metricShapesOf = (docs: Record<string, unknown>[]): string[] =>
  docs.flatMap((d) =>
    (
      d._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] }
    ).CloudWatchMetrics.filter((c) => c.Namespace === METRICS_NAMESPACE).flatMap((c) =>
      c.Metrics.flatMap((m) => c.Dimensions.map((names) => shape(m.Name, Object.fromEntries(names.map((n) => [n, d[n]]))))),
    ),
  );

/** Sets variables for the duration of `run`. */
async function withEnv<T>(vars: Record<string, string>, run: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await run();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const sqsEvent = (body: string): SQSEvent => ({ Records: [{ messageId: 'm1', body } as SQSEvent['Records'][number]] });

let emitted: Set<string>;
/** What was emitted as `shape` writes it. */
let emittedShapes: Set<string>;

beforeAll(async () => {
  // The ingest on the shared stack: a new picture (a DetectLabels call) and a file that is no image.
  const batchId = uniqueId('dash');
  const [image] = await distinctImages(1, seededRandom(Date.now() % 100_000));
  await uploadFile(`uploads/demo/${batchId}/new.png`, image as Buffer, 'image/png');
  await uploadFile(`uploads/demo/${batchId}/notes.png`, 'not an image at all', 'image/png');
  await waitForBridgeIdle({ timeoutMs: 120_000 });
  const { metrics } = (await bridgeStats()) as unknown as { metrics: MetricTotalsSnapshot };
  const ingest = metrics.totals.map((t) => shape(t.metric, t.dimensions));

  // The expiry sweep's handler as deployed, over a table of its own (the shared one may hold expired batches, whose
  // erasures it would send to SQS).
  const table = uniqueId('IceCatWrangler-dash');
  await ensureTable(new DynamoDBClient({}), await loadTableInput(table));
  const expire = await withEnv({ TABLE_NAME: table, ERASE_QUEUE_URL: 'http://127.0.0.1:9/000000000000/icecat-erase' }, () =>
    emfWrittenBy(async () => {
      await jest.isolateModulesAsync(async () => {
        const { handler } = (await import('../../functions/expire/handler')) as { handler: (e: unknown) => Promise<unknown> };
        await handler({});
      });
    }),
  );

  // The callbacks function as handler.ts builds it (Powertools' metrics), on an attempt at an address that answers nothing.
  const callbacks = await withEnv({ CALLBACK_SIGNING_KEY: process.env.CALLBACK_SIGNING_KEY ?? 'k'.repeat(64) }, () =>
    emfWrittenBy(async () => {
      const handler = createCallbacksHandler({
        callbacks: { send: async () => undefined },
        metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'icecat-callbacks' }),
      });
      const message = encodeCallbackMessage({
        type: CALLBACK_MESSAGE_TYPE,
        clientId: 'demo',
        batchId,
        createdAt: Date.now(),
        url: 'http://127.0.0.1:9/callback',
        body: '{}',
        attempts: 0,
      });
      await handler(sqsEvent(message));
    }),
  );
  emittedShapes = new Set([...ingest, ...metricShapesOf(expire), ...metricShapesOf(callbacks)]);
  emitted = new Set([...emittedShapes].map((s) => s.split('|')[0] as string));
  expect(stackEnv('TABLE_NAME')).not.toBe(table);
});

it('names on the dashboard only metrics of its namespace that the code emits', async () => {
  const { dashboard } = await namedInTemplate();
  expect(dashboard.length).toBeGreaterThanOrEqual(6);
  expect(dashboard.filter((name) => !emitted.has(name))).toEqual([]);
});

it('alarms only on metrics of its namespace that the code emits', async () => {
  const { alarms } = await namedInTemplate();
  expect(alarms).toEqual(['CallbackAttempts', 'DetectLabelsRequests', 'ErasuresOverdue']);
  expect(alarms.filter((name) => !emitted.has(name))).toEqual([]);
});

it("alarms on each of those metrics under a dimension set it is emitted with, the service's name included", async () => {
  const { alarmShapes } = await namedInTemplate();
  expect(alarmShapes.filter((s) => !emittedShapes.has(s))).toEqual([]);
});
