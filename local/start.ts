// `npm start`: the local stack on its default ports (ICECAT_*_PORT to change them), data under .data/
// (ICECAT_DATA_DIR), until Ctrl-C.
import path from 'node:path';
import { startStack, type Stack } from './stack';

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
    '',
    `Data            ${stack.dataDir}`,
    `Dead letters    ${dlq}   (also ${endpoints.bridge}/dead-letters; npm run dead-letters -- redrive re-sends them)`,
  ];
  if (stack.demoApiKey) lines.push(`Demo API key    ${stack.demoApiKey}   (client "demo")`);
  lines.push(
    '',
    'For the AWS CLI or any SDK, in another shell:',
    `  export AWS_REGION=${env.AWS_REGION} AWS_DEFAULT_REGION=${env.AWS_DEFAULT_REGION}`,
    `  export AWS_ACCESS_KEY_ID=${env.AWS_ACCESS_KEY_ID} AWS_SECRET_ACCESS_KEY=${env.AWS_SECRET_ACCESS_KEY}`,
    `  export AWS_ENDPOINT_URL_S3=${env.AWS_ENDPOINT_URL_S3} AWS_REQUEST_CHECKSUM_CALCULATION=${env.AWS_REQUEST_CHECKSUM_CALCULATION}`,
    `  export AWS_ENDPOINT_URL_DYNAMODB=${env.AWS_ENDPOINT_URL_DYNAMODB}`,
    '',
    'Upload a folder as batch "first-batch" of client "demo", then read the records:',
    `  aws s3 cp ./photos s3://${stack.bucket}/uploads/demo/first-batch/ --recursive`,
    `  aws dynamodb query --table-name ${stack.table} --key-condition-expression 'batch_id = :b' \\`,
    `      --expression-attribute-values '{":b":{"S":"first-batch"}}'`,
  );
  if (stack.demoApiKey && endpoints.api) {
    lines.push(`  curl -H 'Authorization: Bearer ${stack.demoApiKey}' ${endpoints.api}/v1/batches/first-batch/images`);
  }
  lines.push(
    '',
    'Ctrl-C stops everything.',
    '',
  );
  return lines.join('\n');
}

async function main(): Promise<void> {
  const stack = await startStack();
  console.log(banner(stack));

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      console.log(`${signal} again: exiting without waiting`);
      process.exit(130);
    }
    stopping = true;
    console.log(`\n${signal}: stopping the local stack…`);
    stack.stop().then(
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
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  const code = (err as { code?: string }).code;
  if (code === 'EADDRINUSE') {
    console.error(`A port is already in use (${(err as Error).message}). Is another stack running? Set ICECAT_*_PORT to move it.`);
  } else {
    console.error('The local stack failed to start:', err);
  }
  process.exit(1);
});
