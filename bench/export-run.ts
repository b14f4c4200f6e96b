// One export of bench/export.bench.ts in a process of its own, so that its peak resident memory is the export's alone:
// the batch read a page at a time from the local DynamoDB the bench started, encoded as the API encodes it, and
// streamed past the inline bound into a file (as the API streams it into S3). Prints {ms, bytes, rows, maxRssMB}.
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { exportImages } from '../lib/api/export-batch';
import type { ExportFormat } from '../lib/export/encode';
import { exportChunks, writeExport } from '../lib/export/writer';
import { localDynamoClient } from '../local/dynamodb';

async function main(): Promise<void> {
  const [endpoint, tableName, clientId, batchId, format, outFile, inline] = process.argv.slice(2) as [string, string, string, string, ExportFormat, string, string];
  const ddb = DynamoDBDocumentClient.from(localDynamoClient(endpoint));
  const started = performance.now();
  const out = await writeExport(exportChunks(exportImages({ ddb, tableName }, clientId, batchId, format), format, { catMinConfidence: 80, doneAt: Date.now() }), {
    inlineMaxBytes: Number(inline),
    spill: (body) => pipeline(body, createWriteStream(outFile)),
  });
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ ms, rows: out.rows, bytes: out.bytes, kind: out.kind, maxRssMB: process.resourceUsage().maxRSS / 1024 }));
  ddb.destroy();
}

void main();
