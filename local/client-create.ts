// `npm run --silent client:create -- <clientId>`: makes an API key for a client of the running local stack and prints
// only the key (stdout), so that `KEY=$(npm run --silent client:create -- acme)` works. The stack's DynamoDB is
// found the way the stack announces it: AWS_ENDPOINT_URL_DYNAMODB, else ICECAT_DYNAMODB_PORT on loopback
// (local defaults are the documented local contract, not hidden configuration).
// `-- --aws <clientId>` writes to a deployed table instead: the SDK's own region and credentials, TABLE_NAME required.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AuthError } from '../lib/auth/api-keys';
import { registerApiKey } from '../lib/auth/register';
import { LOCAL_NAMES, portsFromEnv } from './env';

interface Target {
  client: DynamoDBClient;
  tableName: string;
  where: string;
}

function localTarget(): Target {
  const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB || `http://${LOCAL_NAMES.host}:${portsFromEnv().dynamodb}`;
  const client = new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION || LOCAL_NAMES.region,
    credentials: {
      accessKeyId: process.env.AWS_ACCESS_KEY_ID || LOCAL_NAMES.accessKeyId,
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY || LOCAL_NAMES.secretAccessKey,
    },
    maxAttempts: 2,
  });
  return { client, tableName: process.env.TABLE_NAME || LOCAL_NAMES.table, where: endpoint };
}

function awsTarget(): Target | undefined {
  const tableName = process.env.TABLE_NAME;
  if (!tableName) return undefined;
  return { client: new DynamoDBClient({}), tableName, where: 'AWS' };
}

async function main(argv: string[]): Promise<number> {
  const aws = argv[0] === '--aws';
  const [clientId, ...extra] = aws ? argv.slice(1) : argv;
  if (!clientId || extra.length > 0 || clientId.startsWith('-')) {
    console.error('usage: npm run --silent client:create -- [--aws] <clientId>   (clientId: 1-64 of A-Z a-z 0-9 _ -)');
    return 2;
  }
  // The SDK's Node 20 end-of-support notice is not this tool's output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const target = aws ? awsTarget() : localTarget();
  if (!target) {
    console.error('--aws needs TABLE_NAME: the deployed table (see serverless.yml)');
    return 2;
  }
  const { client, tableName, where } = target;
  try {
    const key = await registerApiKey(DynamoDBDocumentClient.from(client), tableName, clientId);
    process.stdout.write(`${key}\n`);
    return 0;
  } catch (err) {
    if (err instanceof AuthError) {
      console.error(err.message);
      return 2;
    }
    console.error(`could not create the client in table ${tableName} at ${where}: ${(err as Error).message}`);
    if (!aws) console.error('is the local stack running (npm start)?');
    return 1;
  } finally {
    client.destroy();
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
