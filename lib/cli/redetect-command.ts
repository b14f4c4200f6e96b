// `icecat redetect <batch> [--dry-run] [--all]` and `icecat changes <batch>` (docs/usage.md "Re-detect a batch"): the
// API's POST …:redetect and GET …/changes, as text or JSON.
import { batchPath, type Redetected, type VerdictChange } from '../api/client-contract';
import { type ApiClient, collect } from './api-client';
import { EXIT } from './errors';
import { json, table } from './output';

function redetectLine(batchId: string, r: Redetected): string {
  const what = `${r.images} ${r.images === 1 ? 'image' : 'images'}, ${r.newCalls} DetectLabels ${r.newCalls === 1 ? 'call' : 'calls'}: $${r.estimatedCostUsd}`;
  if (r.dryRun) return `would classify again ${what} (dry run: nothing changed)`;
  if (r.newCalls === 0)
    return `nothing to classify again in batch ${batchId}: every image was answered by the current model (--all for every one)`;
  return `classifying again ${what}; batch ${batchId} is ${r.batch.status} (icecat changes ${batchId} lists the verdicts that change)`;
}

function changesTable(items: readonly VerdictChange[]): string {
  return table(
    ['file', 'change', 'before', 'after'],
    items.map((c) => [
      c.fileName ?? c.fprint,
      c.change,
      `${c.previous.catConfidence} (${c.previous.model.name}@${c.previous.model.version})`,
      `${c.current.catConfidence} (${c.current.model.name}@${c.current.model.version})`,
    ]),
  );
}

export async function redetectCommand(
  client: ApiClient,
  batch: string,
  o: { json?: boolean; dryRun?: boolean; all?: boolean },
  out: (text: string) => void,
): Promise<number> {
  const body = { ...(o.dryRun ? { dryRun: true } : {}), ...(o.all ? { all: true } : {}) };
  const answer = await client.json<Redetected>('POST', batchPath(batch, ':redetect'), { body });
  out(o.json ? json(answer) : redetectLine(batch, answer));
  return EXIT.ok;
}

export async function changesCommand(
  client: ApiClient,
  batch: string,
  o: { json?: boolean },
  out: (text: string) => void,
): Promise<number> {
  const items = await collect(client.pages<VerdictChange>(batchPath(batch, '/changes')));
  out(o.json ? json({ items }) : items.length ? changesTable(items) : 'no machine verdict changed');
  return EXIT.ok;
}
