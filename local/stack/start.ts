// `npm start`: the local stack on its default ports (ICECAT_*_PORT to change them), data under .data/
// (ICECAT_DATA_DIR), until Ctrl-C, SIGTERM or SIGHUP. `npm start` runs this file with `node --import tsx`, in this
// one process: the tsx command would run it in a child and SIGKILL that child when it does not answer a signal within
// ~60 ms, which a busy stack (the detector holds the event loop for a few hundred ms per image) often cannot.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../../lib/config';
import { IMAGE_ATTRIBUTES } from '../../lib/store/table/attributes';
import { batchPartition } from '../../lib/store/table/schema';
import { dataDirFromEnv, detectorEnvironment, stopGraceMs } from '../config';
import { detectorModelName } from '../detector/model-catalog';
import { defaultDetectorWorkers, MAX_DETECTOR_WORKERS } from '../detector/settings';
import { prepareDataDir } from './data-layout';
import { startStack } from './stack';
import type { Stack } from './types';

/** How long a stop lets the ingest finish the batches in flight; what is unfinished is delivered again at the next start. */
const STOP_GRACE_MS = stopGraceMs();
/** A stop that hangs (a server that will not close) ends the process anyway: the queue's journal is already safe. */
const STOP_DEADLINE_MS = STOP_GRACE_MS + 10_000;
/** One signal often arrives twice (from the terminal or a process-group kill, and forwarded by npm): not a second request. */
const SAME_SIGNAL_MS = 1000;

function banner(stack: Stack): string {
  const { env, endpoints } = stack;
  const relative = path.relative(process.cwd(), stack.dlqFile);
  const dlq = relative.startsWith('..') ? stack.dlqFile : relative;
  const lines = [
    '',
    'IceCatWrangler local stack is up.',
    '',
    'Endpoints',
    `  HTTP API      ${endpoints.api ?? '(not served)'}`,
    `  Web app       ${endpoints.api ? `${endpoints.api}/   (sign in with the API key below)` : '(not served)'}`,
    `  S3            ${endpoints.s3}   bucket ${stack.bucket}`,
    `  DynamoDB      ${endpoints.dynamodb}   table ${stack.table}`,
    `  Rekognition   ${endpoints.rekognition ?? '(not running)'}`,
    `  Bridge        ${endpoints.bridge}/status   (S3 uploads/ → SQS records → ingest handler)`,
    `  Metrics       ${endpoints.bridge}/status.html   (totals of the ingest's EMF metrics; JSON at /status)`,
    '',
    `Data            ${stack.dataDir}`,
    `Dead letters    ${dlq}   (also ${endpoints.bridge}/dead-letters; npm run dead-letters -- redrive re-sends them)`,
  ];
  if (stack.demoApiKey) lines.push(`Demo API key    ${stack.demoApiKey}   (client "demo")`);
  const disk = stack.disk();
  if (disk.low && disk.freeBytes !== undefined) {
    lines.push(
      `Disk space      LOW: ${(disk.freeBytes / 1024 / 1024).toFixed(0)} MiB free for ${stack.dataDir} (ICECAT_LOW_SPACE_MB sets the threshold); ` +
        'a full disk refuses uploads until space is freed',
    );
  }
  lines.push(
    '',
    "For the AWS CLI or any SDK, in another shell (the operator's key: full access; a client uses its own,",
    '`npm run --silent client:s3-keys -- <clientId>`, which writes and lists under uploads/<clientId>/ only):',
    `  export AWS_REGION=${env.AWS_REGION} AWS_DEFAULT_REGION=${env.AWS_DEFAULT_REGION}`,
    `  export AWS_ACCESS_KEY_ID=${env.AWS_ACCESS_KEY_ID} AWS_SECRET_ACCESS_KEY=${env.AWS_SECRET_ACCESS_KEY}`,
    `  export AWS_ENDPOINT_URL_S3=${env.AWS_ENDPOINT_URL_S3} AWS_REQUEST_CHECKSUM_CALCULATION=${env.AWS_REQUEST_CHECKSUM_CALCULATION}`,
    `  export AWS_ENDPOINT_URL_DYNAMODB=${env.AWS_ENDPOINT_URL_DYNAMODB}`,
    '',
    'Upload a folder as batch "first-batch" of client "demo", then read the records:',
    `  aws s3 cp ./photos s3://${stack.bucket}/uploads/demo/first-batch/ --recursive`,
    `  aws dynamodb query --table-name ${stack.table} --key-condition-expression '${IMAGE_ATTRIBUTES.partition} = :b' \\`,
    `      --expression-attribute-values '{":b":{"S":"${batchPartition('demo', 'first-batch')}"}}'`,
  );
  if (stack.demoApiKey && endpoints.api) {
    const auth = `-H 'Authorization: Bearer ${stack.demoApiKey}'`;
    lines.push(
      `  curl ${auth} ${endpoints.api}/v1/batches/first-batch/images`,
      `  curl -X POST ${auth} ${endpoints.api}/v1/batches/first-batch:close   # no more uploads: the batch turns done`,
      '',
      'Or with the icecat CLI (no AWS credentials): uploads, closes, waits and prints the results:',
      `  ICECAT_API_URL=${endpoints.api} ICECAT_API_KEY=${stack.demoApiKey} npx icecat upload ./photos --wait`,
    );
  }
  lines.push('', 'Ctrl-C (or SIGTERM) stops everything; uploads not yet handled are handled at the next start.', '');
  return lines.join('\n');
}

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * One stack per data dir: npm itself exits at the first SIGTERM without waiting for the stack it runs, so a restart
 * right after a stop can find the previous stack still finishing; it waits for it rather than share its files. Then
 * the dir gets the current layout, before the pid file goes in: an older dir is moved aside whole.
 */
async function claimDataDir(dataDir: string): Promise<() => void> {
  const pidFile = path.join(dataDir, 'stack.pid');
  const previous = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : NaN;
  if (Number.isInteger(previous) && previous !== process.pid && isRunning(previous)) {
    console.log(`Waiting for the stack already running on ${dataDir} (pid ${previous}) to stop…`);
    const until = Date.now() + STOP_DEADLINE_MS + 5000;
    while (isRunning(previous)) {
      if (Date.now() > until) throw new Error(`the stack with pid ${previous} still runs on ${dataDir}; stop it first`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await prepareDataDir(dataDir, (line) => console.log(line));
  writeFileSync(pidFile, `${process.pid}\n`);
  return () => rmSync(pidFile, { force: true });
}

async function main(): Promise<void> {
  // An unknown ICECAT_DETECTOR_MODEL stops the start before anything is started.
  detectorModelName(detectorEnvironment(defaultDetectorWorkers(), MAX_DETECTOR_WORKERS).model);
  const dataDir = dataDirFromEnv();
  const release = await claimDataDir(dataDir);
  process.on('exit', release);
  // Signals are handled from the first moment: a stop asked for during the start waits for it, then stops.
  const starting = startStack({ dataDir, drainTimeoutMs: STOP_GRACE_MS });
  let stoppingSince: number | undefined;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince < SAME_SIGNAL_MS) return;
      console.log(`${signal} again: exiting now; unfinished uploads are handled at the next start`);
      process.exit(130);
    }
    stoppingSince = Date.now();
    console.log(`\n${signal}: stopping the local stack (up to ${STOP_GRACE_MS / 1000} s for uploads in progress)…`);
    setTimeout(() => {
      console.error(
        `The stack did not stop within ${STOP_DEADLINE_MS / 1000} s: exiting; unfinished uploads are handled at the next start`,
      );
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    starting
      .then((stack) => stack.stop())
      .then(
        () => {
          console.log('Stopped.');
          process.exit(0);
        },
        (err: unknown) => {
          console.error('Stopping failed:', err);
          process.exit(1);
        },
      );
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));
  const stack = await starting;
  if (stoppingSince === undefined) console.log(banner(stack));
}

main().catch((err: unknown) => {
  const code = (err as { code?: string }).code;
  if (code === 'EADDRINUSE') {
    console.error(`A port is already in use (${(err as Error).message}). Is another stack running? Set ICECAT_*_PORT to move it.`);
  } else if (err instanceof ConfigError) {
    console.error(`The local stack failed to start: ${err.message}`);
  } else {
    console.error('The local stack failed to start:', err);
  }
  process.exit(1);
});
