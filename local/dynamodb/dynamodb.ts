// The local DynamoDB: dynalite persisting under <dataDir>/dynamodb (or an external endpoint such as DynamoDB
// Local), with the IceCatWrangler table created from resources/table.yml, the same definition serverless.yml deploys.

import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  type DynamoDBClientConfig,
  ResourceInUseException,
  ResourceNotFoundException,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { LOCAL_NAMES } from '../contract';
import { freeSpace } from '../disk-space';
import type { LocalIam } from '../iam/iam';
import { closeServer } from '../listen';
import { installSharedParsers } from './dynalite-parsers';
import { guardDynalite } from './iam';
import { loadTableInput } from './table-definition';

/** A client of the local DynamoDB at `endpoint`, whatever process.env holds. */
export function localDynamoClient(endpoint: string, overrides: Partial<DynamoDBClientConfig> = {}): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: LOCAL_NAMES.region,
    credentials: { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: LOCAL_NAMES.secretAccessKey },
    ...overrides,
  });
}

export interface EnsureTableResult {
  created: boolean;
  /** Indexes in the definition that an existing table lacks (its data predates a definition change). */
  missingIndexes: string[];
}

/** Creates the table when it does not exist and waits until it is ACTIVE. */
export async function ensureTable(client: DynamoDBClient, input: CreateTableCommandInput): Promise<EnsureTableResult> {
  const wanted = [...(input.LocalSecondaryIndexes ?? []), ...(input.GlobalSecondaryIndexes ?? [])].map((i) => i.IndexName ?? '');
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: input.TableName }));
    const existing = new Set([...(Table?.LocalSecondaryIndexes ?? []), ...(Table?.GlobalSecondaryIndexes ?? [])].map((i) => i.IndexName));
    return { created: false, missingIndexes: wanted.filter((name) => !existing.has(name)) };
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
  }
  let created = true;
  try {
    await client.send(new CreateTableCommand(input));
  } catch (err) {
    // Another process created it between our DescribeTable and CreateTable.
    if (!(err instanceof ResourceInUseException)) throw err;
    created = false;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: input.TableName });
  return { created, missingIndexes: [] };
}

interface DynaliteServer extends Server {
  close(callback?: (err?: Error) => void): this;
}

/** A DynamoDB error answer as dynalite sends it: an action's callback error with a statusCode and a JSON body. */
interface DynaliteAnswerError {
  statusCode: number;
  body: { __type: string; message: string };
}
interface DynaliteStore {
  options?: { path?: string };
  getTable?: DynaliteGetTable & { cached?: true };
  /** Its LevelDB; dynalite replaced close with its graceful close, keeping LevelDB's own as close._original. */
  db?: { open(): Promise<void>; close: { _original?: () => Promise<void> } };
}
type DynaliteAction = (store: DynaliteStore, data: unknown, cb: (err: unknown, data?: unknown) => void) => void;
type DynaliteGetTable = (
  name: string,
  checkStatus: boolean | ((err: unknown, table?: unknown) => void),
  cb?: (err: unknown, table?: unknown) => void,
) => void;

/** The actions that change a table's definition or status; every other one only reads it. */
const TABLE_ACTIONS = new Set(['createTable', 'deleteTable', 'updateTable']);
const tableCaches = new WeakMap<DynaliteStore, { tables: Map<string, unknown>; generation: number; tableActions: number }>();

/**
 * dynalite reads the table's definition from LevelDB and parses its JSON on every request (its getTable), a tenth
 * of its work per request here. An ACTIVE table's definition changes only by a table action, so it is kept in memory:
 * forgotten when a table action starts and when it answers, and never kept from a read that such an action overlapped
 * (docs/design.md §9). Item actions only read the definition they are given. Answers `cb`, wrapped for a table action.
 */
function cacheTables<T extends (...args: never[]) => void>(store: DynaliteStore, action: string, cb: T): T {
  let cache = tableCaches.get(store);
  if (!cache) {
    cache = { tables: new Map(), generation: 0, tableActions: 0 };
    tableCaches.set(store, cache);
  }
  const tables = cache;
  const original = store.getTable;
  if (original && !original.cached) {
    const cached: DynaliteGetTable & { cached?: true } = (name, checkStatus, done) => {
      const callback = (typeof checkStatus === 'function' ? checkStatus : done) as (err: unknown, table?: unknown) => void;
      const known = tables.tables.get(name);
      // Answered on the next tick, as LevelDB's read would be.
      if (known !== undefined) return process.nextTick(callback, null, known);
      const generation = tables.generation;
      original(name, checkStatus, (err, table) => {
        const active = !err && (table as { TableStatus?: string } | undefined)?.TableStatus === 'ACTIVE';
        if (active && tables.tableActions === 0 && tables.generation === generation) tables.tables.set(name, table);
        callback(err, table);
      });
    };
    cached.cached = true;
    store.getTable = cached;
  }
  if (!TABLE_ACTIONS.has(action)) return cb;
  const forget = () => {
    tables.tables.clear();
    tables.generation++;
  };
  forget();
  tables.tableActions++;
  return ((...args: never[]) => {
    tables.tableActions--;
    forget();
    cb(...args);
  }) as T;
}

/** The operations that write the table's data. */
const WRITE_ACTIONS: ReadonlySet<string> = new Set(['batchWriteItem', 'deleteItem', 'putItem', 'updateItem']);

/** DynamoDB's own 500, which the SDKs retry, saying what refused the request. */
const internalError = (cause: unknown): DynaliteAnswerError => ({
  statusCode: 500,
  body: {
    __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
    message: `Internal server error: ${cause instanceof Error ? cause.message : String(cause)}`,
  },
});

/** dynalite's operations (its index.js requires ./actions/<name> for each at load). */
const DYNALITE_ACTIONS: readonly string[] = [
  'batchGetItem',
  'batchWriteItem',
  'createTable',
  'deleteItem',
  'deleteTable',
  'describeTable',
  'describeTimeToLive',
  'getItem',
  'listTables',
  'listTagsOfResource',
  'putItem',
  'query',
  'scan',
  'tagResource',
  'untagResource',
  'updateItem',
  'updateTable',
];
/** Who hears of a refused write, by the data path of the dynalite store it happened in. */
const faultListeners = new Map<string, (err: unknown) => void>();

/**
 * dynalite throws, outside any try, every action error that is not a DynamoDB answer: a LevelDB write failing on a
 * full disk (LEVEL_IO_ERROR) ended the process. Each action is wrapped so that such an error answers that request
 * with DynamoDB's own 500 InternalServerError (which the SDKs retry), and is reported; the server stays up.
 */
function loadDynalite(): (options: Record<string, unknown>) => DynaliteServer {
  // Its expression parsers made new closures on every parse, compiled again after every full GC (dynalite-parsers.ts).
  installSharedParsers();
  const index = require.resolve('dynalite');
  const fresh = !(index in require.cache);
  for (const name of DYNALITE_ACTIONS) {
    const id = require.resolve(`dynalite/actions/${name}`);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(id);
    const cached = require.cache[id];
    const action = cached?.exports as (DynaliteAction & { answersFaults?: true }) | undefined;
    if (!cached || !action || action.answersFaults) continue;
    const wrapped: DynaliteAction & { answersFaults?: true } = (store, data, answer) => {
      const cb = cacheTables(store, name, answer);
      afterRepair(store, () => {
        // After a refused write LevelDB may hold half a record at its log's end, yet take the next write: written after
        // it, acknowledged, and lost when the log is read back at the reopen (the reader drops the rest of the block). So
        // until the reopen no write is taken at all; reads go on.
        const pending = repairs.get(store);
        if (pending && WRITE_ACTIONS.has(name)) {
          faultListeners.get(store.options?.path ?? '')?.(pending.lastError);
          return cb(internalError(pending.lastError));
        }
        action(store, data, (err, result) => {
          if (!err || (err as Partial<DynaliteAnswerError>).statusCode) return cb(err, result);
          const repair = repairs.get(store);
          // While the database is closed for a reopen that failed, the reopen's error is the cause.
          const cause = repair?.lastError !== undefined && /database is (closed|not open)/i.test(String(err)) ? repair.lastError : err;
          faultListeners.get(store.options?.path ?? '')?.(cause);
          if ((cause as { code?: string }).code === 'LEVEL_IO_ERROR') needsRepair(store, cause);
          cb(internalError(cause));
        });
      });
    };
    wrapped.answersFaults = true;
    cached.exports = wrapped;
  }
  // Its index.js took the actions when it loaded: it must load after them.
  if (!fresh) delete require.cache[index];
  // dynalite ships no type declarations.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('dynalite') as (options: Record<string, unknown>) => DynaliteServer;
}
const dynalite = loadDynalite();

/** How often a LevelDB that failed to write is reopened, at most. */
const REOPEN_EVERY_MS = 250;
/** Room the filesystem must have before a LevelDB that failed to write is reopened (two of its 4 MiB write buffers). */
const REOPEN_FREE_BYTES = 8 * 1024 * 1024;
const repairs = new WeakMap<DynaliteStore, { lastTry: number; running?: Promise<void>; lastError?: unknown }>();

/**
 * LevelDB keeps a failed background write (a table file it could not write for lack of space) as an error that fails
 * every later write until the database is opened again, even once there is room. So after an IO error the database
 * is reopened before the next operation once its filesystem has room again (until then it stays open for reads);
 * operations wait for the reopen, and a reopen that fails is tried again by a later operation.
 */
function needsRepair(store: DynaliteStore, err: unknown): void {
  const repair = repairs.get(store);
  if (repair) repair.lastError = err;
  else repairs.set(store, { lastTry: 0, lastError: err });
}

function afterRepair(store: DynaliteStore, run: () => void): void {
  const repair = repairs.get(store);
  const db = store.db;
  const closeLevel = db?.close._original;
  const dir = store.options?.path;
  if (!repair || !db || !closeLevel || !dir) return run();
  if (!repair.running && Date.now() - repair.lastTry >= REOPEN_EVERY_MS) {
    if ((freeSpace(dir)?.freeBytes ?? 0) >= REOPEN_FREE_BYTES) {
      repair.lastTry = Date.now();
      repair.running = (async () => {
        try {
          await closeLevel();
          await db.open();
          repairs.delete(store);
        } catch (err) {
          // Operations answer InternalServerError (with this cause) until a later try succeeds.
          repair.lastError = err;
        } finally {
          repair.running = undefined;
        }
      })();
    }
  }
  if (repair.running) repair.running.then(run, run);
  else run();
}

interface ClosableIterator {
  close(): Promise<void>;
  return?: () => Promise<void>;
}

/** The iterator prototype every LevelDB iterator dynalite opens inherits (abstract-level's, as its level resolves it). */
export function dynaliteIteratorPrototype(): ClosableIterator {
  const from = (name: string, dir: string) => path.dirname(require.resolve(name, { paths: [dir] }));
  const classicLevel = from('classic-level', from('level', from('dynalite', __dirname)));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { AbstractIterator } = require(require.resolve('abstract-level', { paths: [classicLevel] })) as {
    AbstractIterator: { prototype: object };
  };
  // Keys, values and entries iterators all extend this one.
  return Object.getPrototypeOf(AbstractIterator.prototype) as ClosableIterator;
}

/**
 * dynalite reads Query and Scan results through streams that, once done, close their LevelDB iterator by the async
 * iterator protocol's return(); abstract-level 3's iterators have close() but no return(), so every Query and Scan
 * left its iterator open. The database holds each open iterator, and each iterator its snapshot (memtables and table
 * files), so the process grew with every query for as long as it ran: about 10 KB per upload. With return() as close(),
 * each iterator is released once its stream ends. Idempotent.
 */
export function closeDynaliteIteratorsWhenDone(prototype: ClosableIterator = dynaliteIteratorPrototype()): void {
  if (typeof prototype.return === 'function') return;
  Object.defineProperty(prototype, 'return', {
    configurable: true,
    writable: true,
    value: function (this: ClosableIterator) {
      return this.close();
    },
  });
}

export interface LocalDynamoDBOptions {
  host: string;
  port: number;
  dataDir: string;
  /** Use this endpoint (e.g. DynamoDB Local) instead of starting dynalite. */
  endpoint?: string;
  tableName?: string;
  region?: string;
  quiet?: boolean;
  /** Told of each write dynalite refused with an InternalServerError (e.g. LevelDB out of space). */
  onWriteFault?: (err: unknown) => void;
  /** The functions' roles: a request signed with a function's key does only what its role allows (iam.ts). */
  iam?: LocalIam;
}

export interface LocalDynamoDB {
  url: string;
  /** 0 when the endpoint is external. */
  port: number;
  external: boolean;
  directory?: string;
  table: EnsureTableResult & { name: string };
  close(): Promise<void>;
}

export async function startLocalDynamoDB(opts: LocalDynamoDBOptions): Promise<LocalDynamoDB> {
  const tableName = opts.tableName ?? LOCAL_NAMES.table;
  let server: DynaliteServer | undefined;
  let url = opts.endpoint;
  let port = 0;
  const directory = opts.endpoint ? undefined : path.join(opts.dataDir, 'dynamodb');
  if (directory) {
    await mkdir(directory, { recursive: true });
    closeDynaliteIteratorsWhenDone();
    // Tables stay CREATING for createTableMs in dynalite: the local stack has no reason to wait.
    server = dynalite({ path: directory, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    if (opts.iam) guardDynalite(server, opts.iam);
    const onWriteFault = opts.onWriteFault ?? ((err: unknown) => console.error('[dynamodb] request failed:', err));
    faultListeners.set(directory, onWriteFault);
    const running = server;
    await new Promise<void>((resolve, reject) => {
      running.once('error', reject);
      running.listen(opts.port, opts.host, () => {
        running.off('error', reject);
        resolve();
      });
    });
    port = (server.address() as AddressInfo).port;
    url = `http://${opts.host}:${port}`;
  }
  const close = async () => {
    if (!server) return;
    const running = server;
    server = undefined;
    if (directory) faultListeners.delete(directory);
    // A request in progress must end by itself: destroying its socket leaves its operation running, and dynalite,
    // closing its database on the server's close, then throws from it outside any request (uncaught).
    await closeServer(running, 10_000);
  };
  const client = localDynamoClient(url as string, opts.region ? { region: opts.region } : {});
  try {
    const result = await ensureTable(client, await loadTableInput(tableName));
    if (result.missingIndexes.length > 0 && !opts.quiet) {
      console.warn(
        `[dynamodb] table ${tableName} lacks indexes ${result.missingIndexes.join(', ')} of resources/table.yml;` +
          (directory ? ` delete ${directory} to recreate it` : ' delete the table to recreate it'),
      );
    }
    return { url: url as string, port, external: !directory, directory, table: { name: tableName, ...result }, close };
  } catch (err) {
    await close();
    throw err;
  } finally {
    client.destroy();
  }
}
