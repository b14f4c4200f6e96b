// `npm run --silent client:create -- <clientId>`: makes an API key for a client of the running local stack and prints
// only the key (stdout), so that `KEY=$(npm run --silent client:create -- acme)` works. The stack's DynamoDB is
// found the way the stack announces it: AWS_ENDPOINT_URL_DYNAMODB, else ICECAT_DYNAMODB_PORT on loopback
// (local defaults are the documented local contract, not hidden configuration).
// `-- --aws <clientId>` writes to a deployed table instead: the SDK's own region and credentials, TABLE_NAME required.
// `--rate N` (API requests per second, bursts of 2N), `--max-images-per-day N` and `--max-batches-per-day N` set the client's own limits
// (docs/design.md §11); without them it has the defaults. `npm run client:limits -- <clientId> --rate N ...` changes
// them later without a new key (`default` puts one back to the default); it prints the limits now in force.
// Locally it also makes the client's own S3 key pair in the data dir (`npm run --silent client:s3-keys -- <clientId>`
// prints it); the API key is still its only output.
import { defaultClientLimits } from '../../functions/config';
import { AuthError } from '../../lib/auth/api-keys';
import { registerApiKey } from '../../lib/auth/register';
import { documentClientAt } from '../../lib/aws/clients';
import { type ClientLimits, MAX_BATCHES_PER_DAY, MAX_IMAGES_PER_DAY, MAX_RATE_PER_SECOND } from '../../lib/quota/limits';
import { ClientQuotaStore, UnregisteredClientError } from '../../lib/store/client/quota';
import { Registrations } from '../../lib/store/client/registrations';
import type { TableRef } from '../../lib/store/table/access';
import { dataDirFromEnv, defaultEnv, loadClientCreateSettings } from '../config';
import { LocalStackError } from '../errors';
import { issueClientS3Key } from '../s3/client-key-ring';

interface Target {
  ddb: TableRef['ddb'];
  tableName: string;
  where: string;
}

function localTarget(): Target {
  const { endpoint, region, accessKeyId, secretAccessKey, tableName } = loadClientCreateSettings();
  const ddb = documentClientAt({ endpoint, region, credentials: { accessKeyId, secretAccessKey }, maxAttempts: 2 });
  return { ddb, tableName, where: endpoint };
}

function awsTarget(): Target | undefined {
  const tableName = loadClientCreateSettings().deployedTableName;
  if (!tableName) return undefined;
  return { ddb: documentClientAt({}), tableName, where: 'AWS' };
}

type LimitChanges = { [K in keyof ClientLimits]?: number | null };

class LimitOptionError extends LocalStackError {
  override name = 'LimitOptionError';
  readonly code = 'invalid_limit_option';
}

const LIMIT_FLAGS: Readonly<Record<string, keyof ClientLimits>> = {
  '--rate': 'ratePerSecond',
  '--max-images-per-day': 'maxImagesPerDay',
  '--max-batches-per-day': 'maxBatchesPerDay',
};

/** `--rate N`, `--max-images-per-day N` and `--max-batches-per-day N` (or `default`) from the arguments after the client id. */
function parseLimitOptions(args: string[]): LimitChanges {
  const changes: LimitChanges = {};
  for (let i = 0; i < args.length; i += 2) {
    const [flag, raw] = [args[i], args[i + 1]];
    const field = LIMIT_FLAGS[flag ?? ''];
    if (!field) throw new LimitOptionError(`unknown option ${flag}`);
    if (raw === undefined) throw new LimitOptionError(`${flag} needs a value`);
    if (raw === 'default') {
      changes[field] = null;
      continue;
    }
    const n = Number(raw);
    const max = field === 'maxImagesPerDay' ? MAX_IMAGES_PER_DAY : MAX_BATCHES_PER_DAY;
    const ok =
      field === 'ratePerSecond' ? Number.isFinite(n) && n >= 0.1 && n <= MAX_RATE_PER_SECOND : Number.isInteger(n) && n >= 0 && n <= max;
    if (!ok) {
      throw new LimitOptionError(
        field === 'ratePerSecond'
          ? `--rate must be requests per second from 0.1 to ${MAX_RATE_PER_SECOND}, or default; got "${raw}"`
          : `${flag} must be a whole number from 0 to ${max}, or default; got "${raw}"`,
      );
    }
    changes[field] = n;
  }
  return changes;
}

const USAGE =
  'usage: npm run --silent client:create -- [--aws] <clientId> [--rate N] [--max-images-per-day N] [--max-batches-per-day N]\n' +
  '       npm run --silent client:limits -- [--aws] <clientId> [--rate N|default] [--max-images-per-day N|default] [--max-batches-per-day N|default]\n' +
  '  clientId: 1-64 of A-Z a-z 0-9 _ -; --rate: API requests per second (bursts of twice it); --max-images-per-day: uploads accepted per UTC day;\n' +
  '  --max-batches-per-day: batches created per UTC day (POST /v1/batches, or a plain-S3 upload into a new batch id)';

async function main(argv: string[]): Promise<number> {
  const limitsOnly = argv[0] === '--limits';
  const rest = limitsOnly ? argv.slice(1) : argv;
  const aws = rest[0] === '--aws';
  const [clientId, ...options] = aws ? rest.slice(1) : rest;
  if (!clientId || clientId.startsWith('-')) {
    console.error(USAGE);
    return 2;
  }
  let changes: LimitChanges;
  try {
    changes = parseLimitOptions(options);
  } catch (err) {
    if (!(err instanceof LimitOptionError)) throw err;
    console.error(`${err.message}\n${USAGE}`);
    return 2;
  }
  // The SDK's Node 20 end-of-support notice is not this tool's output.
  defaultEnv('AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', 'true');
  const target = aws ? awsTarget() : localTarget();
  if (!target) {
    console.error('--aws needs TABLE_NAME: the deployed table (see serverless.yml)');
    return 2;
  }
  const { ddb, tableName, where } = target;
  try {
    const quota = new ClientQuotaStore({ ddb, tableName, defaults: defaultClientLimits(), cacheMs: 0 });
    if (limitsOnly) {
      await quota.setLimits(clientId, changes);
      const now = await quota.limitsOf(clientId);
      process.stdout.write(
        `${clientId}: ${now.ratePerSecond} requests/s (bursts of ${2 * now.ratePerSecond}), ${now.maxImagesPerDay} images per UTC day, ${now.maxBatchesPerDay} batches per UTC day\n`,
      );
      return 0;
    }
    const key = await registerApiKey(new Registrations({ ddb, tableName }), clientId);
    await quota.setLimits(clientId, changes);
    // Locally the client also gets its own S3 key pair (npm run client:s3-keys prints it); the API key stays the output.
    if (!aws) {
      try {
        issueClientS3Key(dataDirFromEnv(), clientId);
      } catch (err) {
        console.error(
          `no S3 key pair made for ${clientId} in ${dataDirFromEnv()} (${(err as Error).message}): npm run client:s3-keys makes it`,
        );
      }
    }
    process.stdout.write(`${key}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UnregisteredClientError) {
      console.error(`${err.message}: make it with npm run client:create -- ${clientId}`);
      return 2;
    }
    if (err instanceof AuthError) {
      console.error(err.message);
      return 2;
    }
    console.error(`could not create the client in table ${tableName} at ${where}: ${(err as Error).message}`);
    if (!aws) console.error('is the local stack running (npm start)?');
    return 1;
  } finally {
    ddb.destroy();
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
