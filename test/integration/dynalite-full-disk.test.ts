// The local DynamoDB on a full disk takes no write between the first one LevelDB could not write and its reopen
// (local/dynamodb/dynamodb.ts): LevelDB may keep half a record at its log's end and still take the next write, acknowledged and
// then lost when the reopen reads the log back (the full-disk trial: a result written, its upload's source
// deleted, and the record found `processing` again after the reopen, so the batch never ended). On a tmpfs of its own,
// through the SDK: the disk is filled, a write fails, a little room comes back (less than the reopen waits for).

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_NAMES } from '../../local/contract';
import { type LocalDynamoDB, localDynamoClient, startLocalDynamoDB } from '../../local/dynamodb/dynamodb';

const work = mkdtempSync(path.join(tmpdir(), 'icecat-dynalite-full-'));
const mountPoint = path.join(work, 'mnt');
let mounted = false;
let db: LocalDynamoDB;
let ddb: DynamoDBDocumentClient;

beforeAll(async () => {
  mkdirSync(mountPoint);
  // Must work (CI runs as root): a test that cannot make a small filesystem fails, it does not skip.
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mountPoint]);
  mounted = true;
  db = await startLocalDynamoDB({
    host: '127.0.0.1',
    port: 0,
    dataDir: path.join(mountPoint, 'data'),
    quiet: true,
    onWriteFault: () => undefined,
  });
  ddb = DynamoDBDocumentClient.from(localDynamoClient(db.url, { maxAttempts: 1 }));
}, 60_000);

afterAll(async () => {
  ddb?.destroy();
  await db?.close();
  if (mounted) execFileSync('umount', ['-l', mountPoint]);
  rmSync(work, { recursive: true, force: true });
});

const put = (id: string, bytes = 1000) =>
  ddb.send(new PutCommand({ TableName: LOCAL_NAMES.table, Item: { batch_id: `full#${id}`, img_fprint: 'x', pad: 'p'.repeat(bytes) } }));

it('refuses writes from the first one LevelDB could not write until its reopen, and keeps every write it acknowledged', async () => {
  // Arrange: the filesystem full but for a few KiB, and a write too large for them refused.
  await put('before');
  const { bavail, bsize } = statfsSync(mountPoint);
  execFileSync('fallocate', ['-l', String(bavail * bsize - 16 * 1024), path.join(mountPoint, 'filler')]);
  await expect(put('too-big', 300_000)).rejects.toMatchObject({ name: 'InternalServerError' });
  // A little room back (the reopen waits for 8 MiB).
  execFileSync('fallocate', ['-p', '-o', '0', '-l', String(1024 * 1024), path.join(mountPoint, 'filler')]);

  // Act
  const small = await put('small', 100).then(
    () => 'acknowledged',
    (err: { name?: string }) => err.name,
  );
  rmSync(path.join(mountPoint, 'filler'));
  await put('after');

  // Assert: refused while the reopen was due; what was acknowledged is there after it.
  expect(small).toBe('InternalServerError');
  const read = async (id: string) =>
    (
      await ddb.send(
        new GetCommand({ TableName: LOCAL_NAMES.table, Key: { batch_id: `full#${id}`, img_fprint: 'x' }, ConsistentRead: true }),
      )
    ).Item !== undefined;
  expect([await read('before'), await read('too-big'), await read('small'), await read('after')]).toEqual([true, false, false, true]);
});
