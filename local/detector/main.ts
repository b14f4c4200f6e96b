// `npm run detector`: the local Rekognition DetectLabels endpoint on its own.
import { startDetectorServer } from './server';

function portFromEnv(): number {
  const raw = process.env.ICECAT_REKOGNITION_PORT;
  if (raw === undefined || raw === '') return 4575;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`environment variable ICECAT_REKOGNITION_PORT must be a port number, got "${raw}"`);
  }
  return port;
}

async function main(): Promise<void> {
  const server = await startDetectorServer({ host: '127.0.0.1', port: portFromEnv() });
  console.log(`Rekognition (local detector): ${server.url}`);
  console.log(`  AWS_ENDPOINT_URL_REKOGNITION=${server.url}`);
  const stop = (): void => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
