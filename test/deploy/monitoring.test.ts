// What an operator gets from the packaged template (docs/design.md §14): alarms that each reach the one topic and name
// their runbook section, a dead-letter alarm for every queue with a dead-letter queue, the API stage's throttling and
// JSON access log, every function on arm64 with the binaries of its zip built for it, and X-Ray tracing active.
// test/deploy/dashboard-metrics.test.ts checks the dashboard's and alarms' own metrics against what the code emits.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { extractZip } from '../../scripts/zip';
import { type CfnResource, ensurePackaged, type Packaged, ROOT } from './packaged';

const FUNCTIONS = ['ingest', 'route', 'api', 'batches', 'reconcile', 'expire', 'erase', 'callbacks', 'importTask'];

let pkg: Packaged;
let resources: Record<string, CfnResource>;
let stage: string;
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const alarms = () => ofType('AWS::CloudWatch::Alarm').map(([id, r]) => ({ id, ...(r.Properties as Record<string, unknown>) }) as Alarm);
const functionResources = () => ofType('AWS::Lambda::Function');

interface Alarm {
  id: string;
  AlarmName: string;
  AlarmDescription: string;
  AlarmActions?: unknown[];
  Namespace?: string;
  MetricName?: string;
  Dimensions?: { Name: string; Value: unknown }[];
  Threshold: number;
  ComparisonOperator: string;
}

beforeAll(async () => {
  pkg = await ensurePackaged(FUNCTIONS);
  resources = pkg.template.Resources;
  stage = String(pkg.service.provider.stage);
}, 300_000);

describe('alarms', () => {
  it('exist, each named icecat-<stage>-<what broke>', () => {
    expect(alarms().length).toBeGreaterThanOrEqual(12);
    expect(
      alarms()
        .filter((a) => !new RegExp(`^icecat-${stage}-[a-z0-9]+(-[a-z0-9]+)+$`).test(a.AlarmName))
        .map((a) => a.AlarmName),
    ).toEqual([]);
  });

  it('each send to the one alarm topic', () => {
    expect(ofType('AWS::SNS::Topic').map(([id]) => id)).toEqual(['AlarmTopic']);
    expect(
      alarms()
        .filter((a) => JSON.stringify(a.AlarmActions) !== JSON.stringify([{ Ref: 'AlarmTopic' }]))
        .map((a) => a.AlarmName),
    ).toEqual([]);
  });

  it('subscribe the e-mail given at deploy time, and none when it is empty', () => {
    const subscription = resources.AlarmEmailSubscription as CfnResource & { Condition?: string };
    expect(subscription.Condition).toBe('HasAlarmEmail');
    expect(subscription.Properties).toEqual({ TopicArn: { Ref: 'AlarmTopic' }, Protocol: 'email', Endpoint: { Ref: 'AlarmEmail' } });
    const template = pkg.template as unknown as { Parameters: Record<string, { Default: string }>; Conditions: Record<string, unknown> };
    expect(template.Parameters.AlarmEmail?.Default).toBe('');
    expect(template.Conditions.HasAlarmEmail).toEqual({ 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'AlarmEmail' }, ''] }] });
  });

  it('each name their runbook section in docs/operations.md in their description', () => {
    const missing = alarms().filter((a) => !a.AlarmDescription.endsWith(`Runbook: docs/operations.md, section ${a.AlarmName}.`));
    expect(missing.map((a) => a.AlarmName)).toEqual([]);
  });

  it('have a section each in the runbook, and the runbook none for an alarm that does not exist', () => {
    const runbook = readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8');
    const headings = [...runbook.matchAll(/^#{2,4} (icecat-<stage>-[a-z0-9-]+)\s*$/gm)].map((m) => m[1]).sort();
    expect(headings).toEqual(
      alarms()
        .map((a) => a.AlarmName.replace(`icecat-${stage}-`, 'icecat-<stage>-'))
        .sort(),
    );
  });

  it('watch the dead-letter queue of every queue that has one, for any message in it', () => {
    const withDlq = ofType('AWS::SQS::Queue').filter(([, q]) => q.Properties.RedrivePolicy);
    const watched = alarms()
      .filter(
        (a) =>
          a.Namespace === 'AWS/SQS' &&
          a.MetricName === 'ApproximateNumberOfMessagesVisible' &&
          a.Threshold === 1 &&
          a.ComparisonOperator === 'GreaterThanOrEqualToThreshold',
      )
      .map((a) => JSON.stringify(a.Dimensions?.[0]?.Value));
    const dlqs = withDlq.map(
      ([, q]) =>
        (q.Properties.RedrivePolicy as { deadLetterTargetArn: { 'Fn::GetAtt': [string, string] } }).deadLetterTargetArn['Fn::GetAtt'][0],
    );
    expect(withDlq.length).toBe(4);
    expect(dlqs.filter((dlq) => !watched.includes(JSON.stringify({ 'Fn::GetAtt': [dlq, 'QueueName'] })))).toEqual([]);
    expect(alarms().filter((a) => a.AlarmName.endsWith('-dead-letters')).length).toBe(dlqs.length);
  });

  it('watch the uploads queue for a message older than the reconciliation grace (15 minutes)', () => {
    const oldest = alarms().find((a) => a.MetricName === 'ApproximateAgeOfOldestMessage');
    const custom = pkg.service.custom as { reconcile: { graceSeconds: number } };
    expect([oldest?.AlarmName, JSON.stringify(oldest?.Dimensions), oldest?.Threshold]).toEqual([
      `icecat-${stage}-uploads-oldest-message`,
      JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': ['IngestQueue', 'QueueName'] } }]),
      custom.reconcile.graceSeconds,
    ]);
    expect(custom.reconcile.graceSeconds).toBe(900);
  });
});

describe('HTTP API stage', () => {
  const stageProps = () =>
    resources.HttpApiStage?.Properties as {
      DefaultRouteSettings: Record<string, number>;
      AccessLogSettings: { DestinationArn: unknown; Format: string };
    };

  it('throttles by default', () => {
    const settings = stageProps().DefaultRouteSettings;
    expect(settings.ThrottlingRateLimit).toBeGreaterThan(0);
    expect(settings.ThrottlingBurstLimit).toBeGreaterThanOrEqual(settings.ThrottlingRateLimit as number);
  });

  it('writes one JSON line per request: request id, route, status, latency, integration status and error', () => {
    const format = JSON.parse(stageProps().AccessLogSettings.Format) as Record<string, string>;
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      routeKey: '$context.routeKey',
      status: '$context.status',
      responseLatency: '$context.responseLatency',
      integrationStatus: '$context.integrationStatus',
      integrationError: '$context.integrationErrorMessage',
    });
    // Nothing that could carry a secret: no header (the API key travels in Authorization).
    expect(Object.values(format).filter((v) => /header|authorization/i.test(v))).toEqual([]);
  });

  it("logs into a log group kept as long as the functions' logs", () => {
    expect(stageProps().AccessLogSettings.DestinationArn).toEqual({ 'Fn::GetAtt': ['HttpApiLogGroup', 'Arn'] });
    const retention = ofType('AWS::Logs::LogGroup').map(([id, r]) => [id, r.Properties.RetentionInDays]);
    expect(new Set(retention.map(([, days]) => days))).toEqual(new Set([pkg.service.provider.logRetentionInDays]));
    expect(retention.map(([id]) => id)).toContain('HttpApiLogGroup');
  });
});

describe('functions', () => {
  it('all run on arm64 with X-Ray tracing active', () => {
    const settings = functionResources().map(([id, r]) => [id, r.Properties.Architectures, r.Properties.TracingConfig]);
    expect(settings).toHaveLength(FUNCTIONS.length);
    expect(
      settings.filter(([, arch, tracing]) => JSON.stringify([arch, tracing]) !== JSON.stringify([['arm64'], { Mode: 'Active' }])),
    ).toEqual([]);
  });

  it("give every function's role the X-Ray write policy", () => {
    const roles = functionResources().map(([, r]) => (r.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]);
    const without = roles.filter(
      (role) => !JSON.stringify(resources[role]?.Properties.ManagedPolicyArns ?? []).includes(':iam::aws:policy/AWSXRayDaemonWriteAccess'),
    );
    expect(without).toEqual([]);
  });

  /** ELF e_machine of each native binary in a function's zip. */
  async function binaryMachines(fn: string): Promise<number[]> {
    const dir = mkdtempSync(path.join(tmpdir(), `icecat-arch-${fn}-`));
    try {
      await extractZip(pkg.artifact(fn), dir);
      const walk = (base: string): string[] =>
        readdirSync(path.join(dir, base)).flatMap((name) => {
          const rel = path.join(base, name);
          return statSync(path.join(dir, rel)).isDirectory() ? walk(rel) : [rel];
        });
      return walk('')
        .filter((f) => /\.node$|\.so(\.\d+)*$/.test(f))
        .map((f) => readFileSync(path.join(dir, f)).subarray(0, 20))
        .filter((head) => head.length === 20 && head.readUInt32BE(0) === 0x7f454c46)
        .map((head) => head.readUInt16LE(18));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it.each(FUNCTIONS)('ships in the %s zip only native binaries built for its architecture', async (fn) => {
    const id = functionResources().find(([, r]) => String(r.Properties.FunctionName).endsWith(`-${fn}`))?.[0] as string;
    const arch = (resources[id]?.Properties.Architectures as string[])[0];
    const machines = await binaryMachines(fn);
    const expected = arch === 'arm64' ? 0xb7 : 0x3e;
    expect(machines.filter((m) => m !== expected)).toEqual([]);
    if (fn === 'ingest') expect(machines.length).toBeGreaterThanOrEqual(3);
  });
});
