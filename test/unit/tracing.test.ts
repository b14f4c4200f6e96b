// Tracing as it runs on Lambda and as it runs here: test/helpers/traced-run.ts (a traced handler working on two
// uploads at once, each with an S3 call) in a child process, its segments caught by a stand-in X-Ray daemon on UDP.
// With Lambda's environment it is one trace: the handler's subsegment under Lambda's, each upload its own
// subsegment annotated with its client and batch, each S3 call under its own upload. Without it (the local stack,
// the tests), the same code runs untraced: the same answer, nothing sent, nothing written to stderr.
import { execFile } from 'node:child_process';
import dgram from 'node:dgram';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const TRACE_ROOT = '1-5759e988-bd862e3fe1be46a994272793';
const LAMBDA_PARENT = '53995c3f42cd8ad8';

interface Segment {
  id: string;
  name: string;
  parent_id?: string;
  trace_id?: string;
  annotations?: Record<string, unknown>;
  aws?: { operation?: string; key?: string };
}

async function runTraced(lambda: boolean): Promise<{ stdout: string; stderr: string; segments: Segment[] }> {
  const socket = dgram.createSocket('udp4');
  const packets: string[] = [];
  socket.on('message', (m) => packets.push(m.toString()));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9',
    S3_FORCE_PATH_STYLE: 'true',
    AWS_MAX_ATTEMPTS: '1',
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${socket.address().port}`,
    ...(lambda
      ? {
          AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
          LAMBDA_TASK_ROOT: ROOT,
          AWS_LAMBDA_FUNCTION_NAME: 'icecat-wrangler-test-ingest',
          _HANDLER: 'functions/ingest/handler.handler',
          _X_AMZN_TRACE_ID: `Root=${TRACE_ROOT};Parent=${LAMBDA_PARENT};Sampled=1`,
        }
      : {}),
  };
  try {
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile(process.execPath, ['--import', 'tsx', 'test/helpers/traced-run.ts'], { cwd: ROOT, env }, (err, stdout, stderr) =>
        err ? reject(err) : resolve({ stdout, stderr }),
      ),
    );
    // UDP on loopback: what was sent before the child exited has arrived; give the socket a moment to read it.
    await new Promise((r) => setTimeout(r, 200));
    const segments = packets.map((p) => JSON.parse(p.slice(p.indexOf('\n') + 1)) as Segment);
    return { stdout, stderr, segments };
  } finally {
    socket.close();
  }
}

describe('on Lambda, with tracing active', () => {
  let run: Awaited<ReturnType<typeof runTraced>>;
  beforeAll(async () => {
    run = await runTraced(true);
  }, 60_000);

  it('answers as untraced, with tracing on', () => {
    expect(JSON.parse(run.stdout)).toEqual({ result: 'done', tracing: true, xraySdkLoaded: true });
  });

  it("sends every subsegment in Lambda's trace", () => {
    expect(run.segments.length).toBeGreaterThanOrEqual(5);
    const traceIds = new Set(run.segments.filter((s) => s.trace_id).map((s) => s.trace_id));
    expect([...traceIds]).toEqual([TRACE_ROOT]);
  });

  it("makes the handler a subsegment of Lambda's, annotated with its service", () => {
    const handler = run.segments.filter((s) => s.name === '## functions/ingest/handler.handler');
    expect(handler.map((s) => [s.parent_id, s.annotations?.Service])).toEqual([[LAMBDA_PARENT, 'icecat-wrangler']]);
  });

  it('makes each upload a subsegment of the handler, annotated with its client and batch', () => {
    const handler = run.segments.find((s) => s.name.startsWith('## '))!;
    const uploads = run.segments.filter((s) => s.name === '### upload');
    const byBatch = [...uploads].sort((a, b) => String(a.annotations?.batchId).localeCompare(String(b.annotations?.batchId)));
    expect(byBatch.map((u) => [u.parent_id, u.annotations])).toEqual([
      [handler.id, { clientId: 'c1', batchId: 'b1' }],
      [handler.id, { clientId: 'c1', batchId: 'b2' }],
    ]);
  });

  it('puts each S3 call under its own upload, though the two ran at once', () => {
    const uploads = run.segments.filter((s) => s.name === '### upload');
    const calls = run.segments.filter((s) => s.name === 'S3' && s.aws?.operation === 'HeadObject');
    const batchOfParent = (call: Segment) => uploads.find((u) => u.id === call.parent_id)?.annotations?.batchId;
    expect(calls.map((c) => [c.aws?.key, batchOfParent(c)]).sort()).toEqual([
      ['uploads/c1/b1/a.png', 'b1'],
      ['uploads/c1/b2/a.png', 'b2'],
    ]);
  });
});

describe('off Lambda (the local stack, the tests)', () => {
  it('runs the same code untraced: the same answer, no segment sent, nothing on stderr', async () => {
    const run = await runTraced(false);
    expect([JSON.parse(run.stdout), run.segments, run.stderr]).toEqual([{ result: 'done', tracing: false, xraySdkLoaded: false }, [], '']);
  }, 60_000);
});
