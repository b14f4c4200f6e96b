// The layout of the local stack's data dir. Batch partitions became client-scoped ({clientId}#{batchId}) and clients
// got registry items: data written before cannot be read by the current code (nothing was deployed, so there is no
// migration). A data dir without the current layout's marker but with table data in it is moved aside, with a message;
// one that holds only objects (uploads made while no stack ran) is kept, for the sweep to queue them.
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

const MARKER = 'layout-v2';

/** Makes `dataDir` hold the current layout: an older one is renamed `<dataDir>.old-<time>` and a new one starts. */
export async function prepareDataDir(dataDir: string, log: (line: string) => void): Promise<void> {
  const marker = path.join(dataDir, MARKER);
  if (existsSync(marker)) return;
  const entries = existsSync(dataDir) ? await readdir(dataDir) : [];
  if (entries.includes('dynamodb')) {
    const aside = `${dataDir}.old-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    await rename(dataDir, aside);
    log(
      `[stack] ${dataDir} holds data of an older layout (batches were not scoped by client): moved aside to ${aside}; ` +
        'starting empty. Delete the old directory once you no longer need it.',
    );
  }
  await mkdir(dataDir, { recursive: true });
  await writeFile(marker, 'batch partitions are {clientId}#{batchId}; clients have registry items\n');
}
