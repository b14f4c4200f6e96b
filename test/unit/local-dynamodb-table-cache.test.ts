// The local DynamoDB (dynalite) keeps an ACTIVE table's definition in memory instead of reading it from LevelDB for
// every request, and reads it again after a table action (docs/design.md §9). Counted, never timed.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CreateTableCommand,
  DeleteTableCommand,
  GetItemCommand,
  PutItemCommand,
  ResourceNotFoundException,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { type LocalDynamoDB, localDynamoClient, startLocalDynamoDB } from '../../local/dynamodb/dynamodb';

/** Counts LevelDB point reads, at the classic-level dynalite uses. */
function countGets(): { gets: () => number; restore: () => void } {
  const classicLevel = path.dirname(
    require.resolve('classic-level', {
      paths: [path.dirname(require.resolve('level', { paths: [path.dirname(require.resolve('dynalite'))] }))],
    }),
  );
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ClassicLevel } = require(classicLevel) as { ClassicLevel: { prototype: { _get(...args: unknown[]): unknown } } };
  const original = ClassicLevel.prototype._get;
  let gets = 0;
  ClassicLevel.prototype._get = function (this: unknown, ...args: unknown[]) {
    gets += 1;
    return original.apply(this, args);
  };
  return { gets: () => gets, restore: () => (ClassicLevel.prototype._get = original) };
}

describe('local DynamoDB table definitions', () => {
  let dir: string;
  let db: LocalDynamoDB;
  let counter: ReturnType<typeof countGets>;
  const table = 'Scratch';
  const client = () => localDynamoClient(db.url);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'icecat-ddb-tables-'));
    counter = countGets();
    db = await startLocalDynamoDB({ host: '127.0.0.1', port: 0, dataDir: dir, quiet: true });
  });

  afterAll(async () => {
    await db?.close();
    counter?.restore();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = async (ddb: ReturnType<typeof client>) => {
    await ddb.send(
      new CreateTableCommand({
        TableName: table,
        KeySchema: [{ AttributeName: 'k', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'k', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await waitUntilTableExists({ client: ddb, maxWaitTime: 30, minDelay: 1, maxDelay: 1 }, { TableName: table });
  };

  test('20 GetItems of an ACTIVE table read LevelDB once each (the item), not twice (the table too)', async () => {
    const ddb = client();
    await ddb.send(new PutItemCommand({ TableName: db.table.name, Item: { batch_id: { S: 'p' }, img_fprint: { S: 's' } } }));
    const before = counter.gets();
    for (let i = 0; i < 20; i++)
      await ddb.send(new GetItemCommand({ TableName: db.table.name, Key: { batch_id: { S: 'p' }, img_fprint: { S: 's' } } }));
    expect(counter.gets() - before).toBe(20);
    ddb.destroy();
  });

  test('a table deleted and created again is seen at once: no request answers from a definition it had', async () => {
    const ddb = client();
    await create(ddb);
    await ddb.send(new PutItemCommand({ TableName: table, Item: { k: { S: 'a' } } }));
    await ddb.send(new DeleteTableCommand({ TableName: table }));
    await expect(ddb.send(new PutItemCommand({ TableName: table, Item: { k: { S: 'b' } } }))).rejects.toBeInstanceOf(
      ResourceNotFoundException,
    );
    await create(ddb);
    await ddb.send(new PutItemCommand({ TableName: table, Item: { k: { S: 'c' } } }));
    expect((await ddb.send(new GetItemCommand({ TableName: table, Key: { k: { S: 'c' } } }))).Item).toEqual({ k: { S: 'c' } });
    ddb.destroy();
  });
});
