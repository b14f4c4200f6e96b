// `npm run --silent client:sources -- <clientId> --allow s3://bucket/prefix/ [--deny s3://…]`: the sources a client of
// the running local stack may import from (docs/design.md §16), stored with the client; prints the sources now allowed,
// one a line. Without options it only prints them. `-- --aws <clientId> …` writes to a deployed table (TABLE_NAME), as
// client:limits does. The stack's DynamoDB is found as client:create finds it.
import { documentClientAt } from '../../lib/aws/clients';
import { parseS3Uri } from '../../lib/import/sources';
import { ClientSourcesStore, UnknownSourceClientError } from '../../lib/store/client/sources';
import { defaultEnv, loadClientCreateSettings } from '../config';

const USAGE =
  'usage: npm run --silent client:sources -- [--aws] <clientId> [--allow s3://bucket/prefix/]... [--deny s3://bucket/prefix/]...\n' +
  '  each --allow lets the client import every object under that bucket and prefix; --deny takes one back';

function parse(args: string[]): { allow: string[]; deny: string[] } | string {
  const allow: string[] = [];
  const deny: string[] = [];
  for (let i = 0; i < args.length; i += 2) {
    const [flag, uri] = [args[i], args[i + 1]];
    if (flag !== '--allow' && flag !== '--deny') return `unknown option ${flag}`;
    if (uri === undefined) return `${flag} needs an s3://bucket/prefix`;
    try {
      parseS3Uri(uri, flag);
    } catch (err) {
      return (err as Error).message;
    }
    (flag === '--allow' ? allow : deny).push(uri);
  }
  return { allow, deny };
}

async function main(argv: string[]): Promise<number> {
  const aws = argv[0] === '--aws';
  const [clientId, ...options] = aws ? argv.slice(1) : argv;
  const changes = clientId && !clientId.startsWith('-') ? parse(options) : USAGE;
  if (typeof changes === 'string') {
    console.error(changes === USAGE ? USAGE : `${changes}\n${USAGE}`);
    return 2;
  }
  defaultEnv('AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', 'true');
  const settings = loadClientCreateSettings();
  const tableName = aws ? settings.deployedTableName : settings.tableName;
  if (!tableName) {
    console.error('--aws needs TABLE_NAME: the deployed table (see serverless.yml)');
    return 2;
  }
  const ddb = aws
    ? documentClientAt({})
    : documentClientAt({
        endpoint: settings.endpoint,
        region: settings.region,
        credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
        maxAttempts: 2,
      });
  try {
    const store = new ClientSourcesStore({ ddb, tableName });
    const now = await store.change(clientId!, changes.allow, changes.deny);
    process.stdout.write(now.map((s) => `${s}\n`).join(''));
    return 0;
  } catch (err) {
    if (err instanceof UnknownSourceClientError) {
      console.error(`${err.message}: make it with npm run client:create -- ${clientId}`);
      return 2;
    }
    console.error(`could not change the sources in table ${tableName}: ${(err as Error).message}`);
    return 1;
  } finally {
    ddb.destroy();
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
