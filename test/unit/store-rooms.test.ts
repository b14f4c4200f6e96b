// The store's rooms (docs/decisions/0046-store-by-entity-behind-ports.md): each entity's file holds its pure request
// builders beside the functions that send them, as DynamoDB-Toolbox keeps a command's `…Params` beside the command. A
// file of builders only (their senders elsewhere) is the split this rule undid; the table's shared mechanism
// (lib/store/table/: expressions, the Query runner, transactions) is the one room that serves the others.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..');

/** A function built to answer one request: its declared return type is a command's input, or a Query plan. */
const BUILDER =
  /\)\s*:\s*(?:Query|Update|Put|Delete|Get|BatchGet|BatchWrite|TransactWrite|Scan)CommandInput(?:\[\])?\s*(?:=>|\{)|\)\s*:\s*QueryPlan\s*(?:=>|\{)/;

/** A request sent: by a document client, or handed to one of the table's runners (or the counters' conditional update). */
const SENDER = /\.send\(|\b(?:transactWrite|batchGetAll|batchKeysOf|runQuery|fillPage|conditionalUpdate)(?:<[^()]*>)?\(/;

/** Whether a file's text builds requests it never sends. */
const buildsOnly = (text: string): boolean => BUILDER.test(text) && !SENDER.test(text);

const storeFiles = (): string[] =>
  readdirSync(join(root, 'lib', 'store'), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .filter((file) => !file.startsWith(join('lib', 'store', 'table')));

describe("the store's rooms", () => {
  it('has no file that only builds requests: every builder sits beside the function that sends it', () => {
    const builderOnly = storeFiles().filter((file) => buildsOnly(readFileSync(join(root, file), 'utf8')));

    expect(builderOnly).toEqual([]);
  });

  it('tells a file of builders alone from one that sends what it builds (the check can fail)', () => {
    const builders = [
      'export function markRequest(table: string, key: Key): UpdateCommandInput {\n  return { TableName: table, Key: key };\n}',
      'export const pagesPlan = (table: string): QueryPlan => ({ table });',
    ];
    const sent = [
      `${builders[0]}\nexport const mark = (ddb: Client, key: Key) => ddb.send(new UpdateCommand(markRequest('t', key)));`,
      `${builders[1]}\nexport const pages = (ctx: Ctx) => runQuery<ImageItem>(ctx, pagesPlan('t'), { limit: 10 });`,
    ];

    expect(builders.map(buildsOnly)).toEqual([true, true]);
    expect(sent.map(buildsOnly)).toEqual([false, false]);
    expect(storeFiles().length).toBeGreaterThan(40);
  });
});
