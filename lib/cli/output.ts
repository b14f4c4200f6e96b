// What the CLI prints: tables for people, JSON for scripts, and the per-file outcome of an upload, built from the
// batch's records (an image per distinct picture, its later copies listed as its duplicates) and the files that
// never reached the service.
import stringWidth from 'string-width';
import type { Agreement, BatchSummary, Image, Label, LogEntry, SimilarGroups } from '../api/client-contract';
import type { FileProblem } from './file-checks';
import { importSummaryLines } from './import-output';

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${units[u]}`;
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** The best few labels, "Cat 93, Pet 93, Animal 90". */
export function formatTopLabels(labels: readonly Label[], n = 3): string {
  return [...labels]
    .sort((a, b) => b.confidence - a.confidence)
    .slice(0, n)
    .map((l) => `${l.name} ${Math.round(l.confidence)}`)
    .join(', ');
}

function catCell(image: Pick<Image, 'isCat' | 'catConfidence'>): string {
  if (image.isCat === null || image.isCat === undefined) return '';
  if (!image.isCat) return 'no';
  return typeof image.catConfidence === 'number' ? `yes ${Math.round(image.catConfidence)}%` : 'yes';
}

type FileStatus = Image['status'] | 'not sent' | 'uploaded';

/** One uploaded (or attempted) file's outcome, as the upload's table shows it. */
interface FileRow {
  file: string;
  status: FileStatus;
  cat: string;
  labels: string;
  duplicateOf: string;
  error: string;
}

/**
 * The outcome per file (pure). `sent`: names that reached S3; `settled`: the batch is done, so a sent file without a
 * record of its own is a later copy of an image (the API lists at most some copies' names per image).
 */
export function fileRows(
  sent: Iterable<string>,
  images: readonly Image[],
  problems: readonly (FileProblem & { unsent?: boolean })[],
  settled: boolean,
): FileRow[] {
  const rows = new Map<string, FileRow>();
  const imageRow = (file: string, image: Image, status: FileStatus, duplicateOf = ''): FileRow => ({
    file,
    status,
    cat: catCell(image),
    labels: formatTopLabels(image.labels),
    duplicateOf,
    error: image.error ? `${image.error.code}: ${image.error.message}` : '',
  });
  for (const image of images) {
    const original = image.fileName ?? image.fprint;
    rows.set(original, imageRow(original, image, image.status));
    for (const copy of image.duplicateFiles ?? []) if (!rows.has(copy)) rows.set(copy, imageRow(copy, image, 'duplicate', original));
  }
  for (const name of sent) {
    if (rows.has(name)) continue;
    rows.set(name, {
      file: name,
      status: settled ? 'duplicate' : 'uploaded',
      cat: '',
      labels: '',
      duplicateOf: settled ? '(not listed)' : '',
      error: '',
    });
  }
  for (const p of problems) {
    rows.set(p.file, {
      file: p.file,
      status: p.unsent ? 'not sent' : 'fail',
      cat: '',
      labels: '',
      duplicateOf: '',
      error: `${p.code}: ${p.message}`,
    });
  }
  return [...rows.values()].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/**
 * A borderless table with a header row, like `gh` and `kubectl` print: columns padded to their widest cell (in
 * terminal columns, so wide characters line up), two spaces apart. Built by hand: a table library's per-cell
 * objects cost ~80 MB for a 10,000-file upload (bench/cli.bench.ts), this costs the text.
 */
export function table(head: string[], rows: readonly string[][]): string {
  const lines = [head, ...rows];
  const cellWidths = lines.map((cells) => cells.map((cell) => stringWidth(cell)));
  const widths: number[] = [];
  for (const row of cellWidths) row.forEach((width, i) => (widths[i] = Math.max(widths[i] ?? 0, width)));
  const line = (cells: readonly string[], r: number) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - (cellWidths[r]?.[i] ?? 0))))
      .join('  ')
      .trimEnd();
  return lines.map(line).join('\n');
}

export function fileTable(rows: readonly FileRow[]): string {
  const withErrors = rows.some((r) => r.error);
  const head = ['FILE', 'STATUS', 'CAT', 'TOP LABELS', 'DUPLICATE OF', ...(withErrors ? ['ERROR'] : [])];
  return table(
    head,
    rows.map((r) => [r.file, r.status, r.cat, r.labels, r.duplicateOf, ...(withErrors ? [r.error] : [])]),
  );
}

export function imageTable(images: readonly Image[]): string {
  // The capture time when any image has one (camera-trap photos), as the camera wrote it.
  const captured = images.some((i) => i.capturedAt);
  return table(
    ['FILE', 'STATUS', 'CAT', 'TOP LABELS', 'COPIES', ...(captured ? ['CAPTURED'] : []), 'FPRINT'],
    images.map((i) => [
      i.fileName ?? '',
      i.status,
      catCell(i),
      formatTopLabels(i.labels),
      String(i.duplicates || ''),
      ...(captured ? [i.capturedAt ?? ''] : []),
      i.fprint,
    ]),
  );
}

/** One row per image of each near-duplicate group: the group's number and largest link, the file, the fingerprint. */
export function similarTable(groups: SimilarGroups['groups']): string {
  return table(
    ['GROUP', 'MAX DISTANCE', 'FILE', 'FPRINT'],
    groups.flatMap((g, i) => g.fprints.map((f, k) => [String(i + 1), String(g.maxDistance), g.fileNames[k] ?? '', f])),
  );
}

export function batchTable(batches: readonly BatchSummary[]): string {
  return table(
    ['BATCH', 'STATUS', 'FILES', 'OK', 'FAIL', 'DUP', 'CATS', 'CREATED'],
    batches.map((b) => [
      b.batchId,
      b.status,
      `${b.counts.total}${b.expected !== null && b.expected !== undefined ? `/${b.expected}` : ''}`,
      String(b.counts.success),
      String(b.counts.fail),
      String(b.counts.duplicate),
      String(b.counts.cats),
      b.createdAt,
    ]),
  );
}

export function summaryLines(b: BatchSummary): string {
  const c = b.counts;
  const lines: [string, string | number | boolean | null | undefined][] = [
    ['batch', b.batchId],
    ['status', b.status],
    ['closed', b.closed],
    ['expected', b.expected],
    ...(b.import ? importSummaryLines(b.import) : []),
    ['total', c.total],
    ['pending', c.pending],
    ['success', c.success],
    ['fail', c.fail],
    ['duplicate', c.duplicate],
    ['reused', c.reused],
    ['cats', c.cats],
    ['reviewed', c.reviewed],
    ['corrected', c.corrected],
    ['debug', b.debug],
    ['created', b.createdAt],
    ['closed at', b.closedAt],
    ['done at', b.doneAt],
    ['expires', b.expiresAt],
  ];
  return lines
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${`${k}:`.padEnd(11)}${String(v)}`)
    .join('\n');
}

export function logLines(entries: readonly LogEntry[]): string {
  return entries
    .map((e) =>
      [`${e.loggedAt ?? '-'}  ${e.fileName ?? e.fprint}  ${e.status ?? ''}`.trimEnd(), ...e.lines.map((l) => `  ${l}`)].join('\n'),
    )
    .join('\n');
}

export const json = (value: unknown): string => JSON.stringify(value, null, 2);

/** The review queue: the least certain first, with the machine's verdict and confidence. */
export function reviewQueueTable(images: readonly Image[]): string {
  return table(
    ['FILE', 'MACHINE', 'CAT CONFIDENCE', 'TOP LABELS', 'FPRINT'],
    images.map((i) => [
      i.fileName ?? '',
      verdictWord(i.machineIsCat ?? i.isCat),
      typeof i.catConfidence === 'number' ? `${Math.round(i.catConfidence * 10) / 10}%` : '',
      formatTopLabels(i.labels),
      i.fprint,
    ]),
  );
}

const verdictWord = (isCat: boolean | null | undefined): string => (isCat === true ? 'cat' : isCat === false ? 'not a cat' : '');

/** One reviewed image: the person's verdict beside the machine's. */
export function reviewLine(image: Image): string {
  const name = image.fileName ?? image.fprint;
  const machine = verdictWord(image.machineIsCat);
  if (!image.review) return `${name}: no review; ${verdictWord(image.isCat)} (the machine's verdict)`;
  const agrees = image.review.isCat === image.machineIsCat ? 'as the machine said' : `the machine said: ${machine}`;
  return `${name}: ${verdictWord(image.review.isCat)} (${agrees})${image.review.note ? ` — ${image.review.note}` : ''}`;
}

const percent = (ratio: number | null): string => (ratio === null ? '-' : `${Math.round(ratio * 1000) / 10}%`);

export function agreementLines(batchId: string, a: Agreement): string {
  const lines: [string, string | number][] = [
    ['reviewed', a.reviewed],
    ['agree', a.reviewed ? `${a.agree} (${percent(a.agree / a.reviewed)})` : 0],
    ['precision', percent(a.precision)],
    ['recall', percent(a.recall)],
    ['threshold', a.catMinConfidence ?? '-'],
    ['suggested', a.suggestedCatMinConfidence ?? '- (review some images first)'],
  ];
  const out = lines.map(([k, v]) => `${`${k}:`.padEnd(11)}${String(v)}`);
  if (a.suggestedCatMinConfidence !== null && a.suggestedCatMinConfidence !== a.catMinConfidence) {
    out.push(
      `re-threshold: POST /v1/batches/${batchId}:reclassify {"catMinConfidence": ${a.suggestedCatMinConfidence}} (or the web app's button)`,
    );
  }
  return out.join('\n');
}
