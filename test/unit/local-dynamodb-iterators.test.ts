// The local DynamoDB (dynalite) must release the LevelDB iterator of every Query and Scan: one left open pins its
// snapshot for the life of the process, and the stack then grew with every upload (docs/design.md §4).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PutItemCommand, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { dynaliteIteratorPrototype, type LocalDynamoDB, localDynamoClient, startLocalDynamoDB } from '../../local/dynamodb/dynamodb';

interface CountedIterator {
  close(): Promise<void>;
}

/** Counts LevelDB iterators opened and closed, at the classic-level dynalite uses. */
function countIterators(): { open: () => number; opened: () => number; restore: () => void } {
  const classicLevel = path.dirname(
    require.resolve('classic-level', {
      paths: [path.dirname(require.resolve('level', { paths: [path.dirname(require.resolve('dynalite'))] }))],
    }),
  );
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ClassicLevel } = require(classicLevel) as { ClassicLevel: { prototype: { _iterator(options: unknown): CountedIterator } } };
  const original = ClassicLevel.prototype._iterator;
  let opened = 0;
  let closed = 0;
  ClassicLevel.prototype._iterator = function (this: unknown, options: unknown) {
    const iterator = original.call(this, options);
    opened += 1;
    const close = iterator.close.bind(iterator);
    let counted = false;
    iterator.close = async () => {
      if (!counted) closed += 1;
      counted = true;
      return close();
    };
    return iterator;
  };
  return { open: () => opened - closed, opened: () => opened, restore: () => (ClassicLevel.prototype._iterator = original) };
}

describe('local DynamoDB iterators', () => {
  let dir: string;
  let db: LocalDynamoDB;
  let counter: ReturnType<typeof countIterators>;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'icecat-ddb-iterators-'));
    counter = countIterators();
    db = await startLocalDynamoDB({ host: '127.0.0.1', port: 0, dataDir: dir, quiet: true });
  });

  afterAll(async () => {
    await db?.close();
    counter?.restore();
    rmSync(dir, { recursive: true, force: true });
  });

  test('iterators share the prototype whose return() closes them', () => {
    expect(typeof dynaliteIteratorPrototype().return).toBe('function');
  });

  test('after 60 queries and scans (whole, limited, by index) no LevelDB iterator is left open', async () => {
    const client = localDynamoClient(db.url);
    const table = db.table.name;
    try {
      for (let i = 0; i < 20; i++) {
        await client.send(
          new PutItemCommand({
            TableName: table,
            Item: { batch_id: { S: 'c#b' }, img_fprint: { S: `f${i}` }, client_id: { S: 'c' }, status_ts: { S: `success#${i}` } },
          }),
        );
      }
      const before = counter.opened();
      for (let i = 0; i < 20; i++) {
        const key = { ':b': { S: 'c#b' } };
        // Whole partition, a page of one (the stream stops early), and an index.
        await client.send(new QueryCommand({ TableName: table, KeyConditionExpression: 'batch_id = :b', ExpressionAttributeValues: key }));
        await client.send(
          new QueryCommand({ TableName: table, KeyConditionExpression: 'batch_id = :b', ExpressionAttributeValues: key, Limit: 1 }),
        );
        await client.send(
          new QueryCommand({
            TableName: table,
            IndexName: 'client-fprint',
            KeyConditionExpression: 'client_id = :c AND img_fprint = :f',
            ExpressionAttributeValues: { ':c': { S: 'c' }, ':f': { S: `f${i}` } },
          }),
        );
      }
      await client.send(new ScanCommand({ TableName: table, Limit: 3 }));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(counter.opened() - before).toBeGreaterThanOrEqual(61);
      expect(counter.open()).toBe(0);
    } finally {
      client.destroy();
    }
  });
});
