// `npm run detector`: the local Rekognition DetectLabels endpoint on its own.
import { localPorts } from '../config';
import { startDetectorFromEnvironment } from './from-environment';

async function main(): Promise<void> {
  const server = await startDetectorFromEnvironment({ host: '127.0.0.1', port: localPorts().rekognition });
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
