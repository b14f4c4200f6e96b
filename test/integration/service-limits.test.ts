// The services' limits where the local DynamoDB must refuse as DynamoDB does (docs/local-stack.md): an item over 400 KB,
// BatchWriteItem over 25 requests, BatchGetItem over 100 keys (dynalite's own checks), and a transaction over 100
// items or 4 MB (local/dynamodb/iam.ts; dynalite has no transactions, DynamoDB Local checks them itself). Through the
// SDK over loopback, with the stack's own key. The detector's DetectLabels limits have their tests in detector.test.ts,
// the local queues' in test/unit/iam-queues.test.ts.
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { LOCAL_NAMES } from '../../local/contract';
import { stackEnv, uniqueId } from '../helpers';

const TABLE = LOCAL_NAMES.table;
let ddb: DynamoDBClient;
beforeAll(() => {
  ddb = new DynamoDBClient({ endpoint: stackEnv('AWS_ENDPOINT_URL_DYNAMODB'), region: LOCAL_NAMES.region, maxAttempts: 1 });
});
afterAll(() => ddb.destroy());

const key = (i: number, batch = uniqueId('limits')) => ({ batch_id: { S: batch }, img_fprint: { S: `f${i}` } });
const refusal = (call: Promise<unknown>) =>
  call.then(
    () => 'ok',
    (err: { name: string; $metadata?: { httpStatusCode?: number } }) => `${err.name} ${err.$metadata?.httpStatusCode}`,
  );

describe('DynamoDB limits on the local stack', () => {
  it('refuses an item over 400 KB, put or grown by an update', async () => {
    const big = 'x'.repeat(401 * 1024);
    const item = key(0);

    expect(await refusal(ddb.send(new PutItemCommand({ TableName: TABLE, Item: { ...item, blob: { S: big } } })))).toBe(
      'ValidationException 400',
    );
    await ddb.send(new PutItemCommand({ TableName: TABLE, Item: { ...item, blob: { S: big.slice(0, 300 * 1024) } } }));
    const grow = new UpdateItemCommand({
      TableName: TABLE,
      Key: item,
      UpdateExpression: 'SET more = :m',
      ExpressionAttributeValues: { ':m': { S: big.slice(0, 200 * 1024) } },
    });
    expect(await refusal(ddb.send(grow))).toBe('ValidationException 400');
  });

  it('refuses a BatchWriteItem of 26 requests and a BatchGetItem of 101 keys', async () => {
    const batch = uniqueId('limits');
    const puts = Array.from({ length: 26 }, (_, i) => ({ PutRequest: { Item: key(i, batch) } }));
    const keys = Array.from({ length: 101 }, (_, i) => key(i, batch));

    expect(await refusal(ddb.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: puts } })))).toBe('ValidationException 400');
    expect(await refusal(ddb.send(new BatchGetItemCommand({ RequestItems: { [TABLE]: { Keys: keys } } })))).toBe('ValidationException 400');
    expect(await refusal(ddb.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: puts.slice(0, 25) } })))).toBe('ok');
  });

  it('refuses a transaction of 101 items, and one over 4 MB', async () => {
    const batch = uniqueId('limits');
    const many = Array.from({ length: 101 }, (_, i) => ({ Put: { TableName: TABLE, Item: key(i, batch) } }));
    const large = Array.from({ length: 11 }, (_, i) => ({
      Put: { TableName: TABLE, Item: { ...key(i, batch), blob: { S: 'y'.repeat(390 * 1024) } } },
    }));

    expect(await refusal(ddb.send(new TransactWriteItemsCommand({ TransactItems: many })))).toBe('ValidationException 400');
    expect(await refusal(ddb.send(new TransactWriteItemsCommand({ TransactItems: large })))).toBe('ValidationException 400');
  });
});
