// `npm run --silent client:s3-keys -- <clientId>`: the client's own S3 key pair on the local stack (made at the first ask,
// the same pair afterwards), printed as two lines a shell or an .env file reads:
//   AWS_ACCESS_KEY_ID=…
//   AWS_SECRET_ACCESS_KEY=…
// The key writes and lists under uploads/<clientId>/ only (local/s3/scope.ts), as a client's IAM role does on AWS
// (docs/deployment.md). Kept in the data dir (ICECAT_DATA_DIR, else .data), which the running local S3 reads.
import { InvalidClientIdError } from '../../lib/auth/api-keys';
import { dataDirFromEnv } from '../config';
import { issueClientS3Key } from '../s3/client-key-ring';

function main(argv: string[]): number {
  const [clientId, ...extra] = argv;
  if (!clientId || clientId.startsWith('-') || extra.length > 0) {
    console.error('usage: npm run --silent client:s3-keys -- <clientId>');
    return 2;
  }
  try {
    const key = issueClientS3Key(dataDirFromEnv(), clientId);
    process.stdout.write(`AWS_ACCESS_KEY_ID=${key.accessKeyId}\nAWS_SECRET_ACCESS_KEY=${key.secretAccessKey}\n`);
    return 0;
  } catch (err) {
    if (err instanceof InvalidClientIdError) {
      console.error(err.message);
      return 2;
    }
    console.error(`could not make the S3 key of ${clientId} in ${dataDirFromEnv()}: ${(err as Error).message}`);
    return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
