// The CloudWatch dashboard's body (docs/design.md §14, docs/operations.md "The dashboard"), for serverless.yml:
//   DashboardBody: ${file(./scripts/dashboard.cjs):body}
// osls resolves it to a Fn::Sub of the JSON, so the API's id and the region are filled in by CloudFormation.
// Metrics in the IceCatWrangler namespace are the functions' own EMF metrics (lib/ingest/metrics.ts, functions/*);
// test/deploy/monitoring.test.ts checks that each one named here is emitted by the code in a local run.

const NAMESPACE = 'IceCatWrangler';

/** A widget of metric lines, 12 wide. */
function graph(title, metrics, extra = {}) {
  return {
    type: 'metric',
    width: 12,
    height: 6,
    properties: { title, region: '${AWS::Region}', view: 'timeSeries', stacked: false, metrics, ...extra },
  };
}

/** A row of the lines a SEARCH expression finds, one per dimension value. */
const search = (id, query, stat, period) => [{ id, expression: `SEARCH('${query}', '${stat}', ${period})`, period }];

/** The ingest: images by outcome, DetectLabels' latency, requests and spend. */
function ingestWidgets(pricePerCall) {
  const ingest = ['service', 'icecat-ingest'];
  return [
    graph(
      'Images per minute by outcome',
      [
        search('outcomes', `{${NAMESPACE},Outcome,service} MetricName="Images" service="icecat-ingest"`, 'Sum', 60),
        search('failures', `{${NAMESPACE},ErrorCode,Outcome,service} MetricName="Images" service="icecat-ingest"`, 'Sum', 60),
      ],
      { period: 60, stat: 'Sum', stacked: true },
    ),
    graph(
      'DetectLabels latency (ms)',
      [
        [NAMESPACE, 'DetectLabelsLatency', ...ingest, { stat: 'p50', label: 'p50' }],
        [NAMESPACE, 'DetectLabelsLatency', ...ingest, { stat: 'p99', label: 'p99' }],
      ],
      { period: 60 },
    ),
    graph(
      'DetectLabels requests per minute by outcome',
      [
        search('requests', `{${NAMESPACE},Outcome,service} MetricName="DetectLabelsRequests" service="icecat-ingest"`, 'Sum', 60),
        [NAMESPACE, 'DetectLabelsCalls', ...ingest, { stat: 'Sum', label: 'calls (images sent)' }],
      ],
      { period: 60, stat: 'Sum' },
    ),
    {
      type: 'metric',
      width: 6,
      height: 6,
      properties: {
        title: `DetectLabels spend, last 24 hours (USD at $${pricePerCall} a call)`,
        region: '${AWS::Region}',
        view: 'singleValue',
        period: 86400,
        stat: 'Sum',
        setPeriodToTimeRange: true,
        metrics: [
          [{ id: 'spend', expression: `calls * ${pricePerCall}`, label: 'USD' }],
          [NAMESPACE, 'DetectLabelsCalls', ...ingest, { id: 'calls', stat: 'Sum', period: 86400, visible: false }],
        ],
      },
    },
  ];
}

/** The queues and the ingest function: dead letters, the uploads queue's depth and age, errors and throttles. */
function queueWidgets(fn, queue) {
  return [
    {
      type: 'metric',
      width: 6,
      height: 6,
      properties: {
        title: 'Dead letters (messages waiting)',
        region: '${AWS::Region}',
        view: 'singleValue',
        period: 300,
        stat: 'Maximum',
        metrics: ['uploads-dlq', 'upload-events-dlq', 'erase-dlq', 'callbacks-dlq'].map((name) => [
          'AWS/SQS',
          'ApproximateNumberOfMessagesVisible',
          'QueueName',
          queue(name),
          { label: name },
        ]),
      },
    },
    graph(
      'Uploads queue: depth and in flight',
      [
        ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', queue('uploads'), { stat: 'Maximum', label: 'waiting' }],
        ['AWS/SQS', 'ApproximateNumberOfMessagesNotVisible', 'QueueName', queue('uploads'), { stat: 'Maximum', label: 'in flight' }],
        [
          'AWS/SQS',
          'ApproximateNumberOfMessagesVisible',
          'QueueName',
          queue('upload-events'),
          { stat: 'Maximum', label: 'upload events waiting' },
        ],
      ],
      { period: 60 },
    ),
    graph(
      'Uploads queue: oldest message (s)',
      [
        ['AWS/SQS', 'ApproximateAgeOfOldestMessage', 'QueueName', queue('uploads'), { stat: 'Maximum', label: 'uploads' }],
        ['AWS/SQS', 'ApproximateAgeOfOldestMessage', 'QueueName', queue('upload-events'), { stat: 'Maximum', label: 'upload events' }],
      ],
      { period: 60, annotations: { horizontal: [{ label: 'alarm', value: '__OLDEST__' }] } },
    ),
    graph(
      'Ingest function',
      [
        ['AWS/Lambda', 'Errors', 'FunctionName', fn('ingest'), { stat: 'Sum' }],
        ['AWS/Lambda', 'Throttles', 'FunctionName', fn('ingest'), { stat: 'Sum' }],
        ['AWS/Lambda', 'ConcurrentExecutions', 'FunctionName', fn('ingest'), { stat: 'Maximum', yAxis: 'right' }],
      ],
      { period: 60 },
    ),
  ];
}

/** The HTTP API's latency and answers, late erasures and callbacks. */
function apiWidgets() {
  return [
    graph(
      'API latency (ms)',
      [
        ['AWS/ApiGateway', 'Latency', 'ApiId', '${HttpApi}', { stat: 'p50', label: 'p50' }],
        ['AWS/ApiGateway', 'Latency', 'ApiId', '${HttpApi}', { stat: 'p99', label: 'p99' }],
        ['AWS/ApiGateway', 'IntegrationLatency', 'ApiId', '${HttpApi}', { stat: 'p99', label: 'integration p99' }],
      ],
      { period: 60 },
    ),
    graph(
      'API requests, 4xx and 5xx per minute',
      [
        ['AWS/ApiGateway', 'Count', 'ApiId', '${HttpApi}', { stat: 'Sum', label: 'requests' }],
        ['AWS/ApiGateway', '4xx', 'ApiId', '${HttpApi}', { stat: 'Sum', label: '4xx' }],
        ['AWS/ApiGateway', '5xx', 'ApiId', '${HttpApi}', { stat: 'Sum', label: '5xx' }],
      ],
      { period: 60 },
    ),
    graph(
      'Erasures overdue and callbacks',
      [
        [NAMESPACE, 'ErasuresOverdue', 'service', 'icecat-expire', { stat: 'Maximum', label: 'batches erased late' }],
        search('callbacks', `{${NAMESPACE},Outcome,service} MetricName="CallbackAttempts" service="icecat-callbacks"`, 'Sum', 300),
      ],
      { period: 300 },
    ),
  ];
}

function dashboard({ service, stage, pricePerCall }) {
  const fn = (name) => `${service}-${stage}-${name}`;
  const queue = (name) => `${service}-${stage}-${name}`;
  return {
    start: '-PT6H',
    widgets: [...ingestWidgets(pricePerCall), ...queueWidgets(fn, queue), ...apiWidgets()],
  };
}

async function setting(resolveVariable, address) {
  const value = await resolveVariable(address);
  if (value === undefined || value === null || value === '') throw new Error(`${address} must be set`);
  return value;
}

module.exports = {
  dashboard,
  body: async ({ resolveVariable }) => {
    const body = dashboard({
      service: await setting(resolveVariable, 'self:service'),
      stage: await setting(resolveVariable, 'sls:stage'),
      pricePerCall: Number(await setting(resolveVariable, 'self:custom.rekognition.pricePerImageUsd')),
    });
    const oldest = Number(await setting(resolveVariable, 'self:custom.alarms.oldestUploadSeconds'));
    return { 'Fn::Sub': JSON.stringify(body).replace('"__OLDEST__"', String(oldest)) };
  },
};
