// Progress of an upload on stderr (stdout is for results): a live bar on a terminal — files and bytes sent, then
// files classified of those sent, each with a rate and an ETA — and plain lines, at most one every few seconds,
// when stderr is a file or a pipe.
import { SingleBar } from 'cli-progress';
import { formatBytes, formatDuration } from './output';

export interface ProgressReporter {
  uploadStarted(totalFiles: number, totalBytes: number): void;
  fileUploaded(bytes: number): void;
  /** A line that must be seen (a failed file, a retry), printed above a live bar. */
  note(line: string): void;
  uploadEnded(): void;
  classifyStarted(total: number): void;
  classified(done: number, total: number): void;
  classifyEnded(): void;
  /** An import's listing as it goes: a line printed when it changes (a redrawn line on a terminal). */
  importing(state: string, line: string): void;
}

export const silentProgress: ProgressReporter = {
  uploadStarted() {},
  fileUploaded() {},
  note() {},
  uploadEnded() {},
  classifyStarted() {},
  classified() {},
  classifyEnded() {},
  importing() {},
};

/** Rate per second and the time left at that rate (pure). */
function rateAndEta(done: number, total: number, elapsedMs: number): { rate: number; etaMs: number | undefined } {
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  return { rate, etaMs: rate > 0 ? ((total - done) / rate) * 1000 : undefined };
}

const eta = (ms: number | undefined) => (ms === undefined ? '--' : formatDuration(ms));

interface PlainProgressOptions {
  write: (line: string) => void;
  /** Least time between two progress lines. */
  everyMs?: number;
  now?: () => number;
}

/** One line now and then: for logs and pipes, where a redrawn bar would be noise. */
export function plainProgress(opts: PlainProgressOptions): ProgressReporter {
  const now = opts.now ?? Date.now;
  const everyMs = opts.everyMs ?? 2_000;
  let started = 0;
  let last = 0;
  let files = 0;
  let bytes = 0;
  let totalFiles = 0;
  let totalBytes = 0;
  let classifyStarted = 0;
  let lastDone = -1;
  let lastImport = '';
  let lastImportState = '';
  const due = (force: boolean) => {
    const t = now();
    if (!force && t - last < everyMs) return false;
    last = t;
    return true;
  };
  const uploadLine = () => {
    const { rate, etaMs } = rateAndEta(files, totalFiles, now() - started);
    opts.write(
      `uploaded ${files}/${totalFiles} files, ${formatBytes(bytes)}/${formatBytes(totalBytes)}, ${rate.toFixed(1)} files/s, ETA ${eta(etaMs)}`,
    );
  };
  return {
    uploadStarted(f, b) {
      started = last = now();
      totalFiles = f;
      totalBytes = b;
      opts.write(`uploading ${f} files (${formatBytes(b)})`);
    },
    fileUploaded(b) {
      files++;
      bytes += b;
      if (due(false)) uploadLine();
    },
    note: (line) => opts.write(line),
    uploadEnded() {
      // Files refused on the way (by the API's size cap, by S3) leave the estimate: end on what was sent.
      totalFiles = files;
      totalBytes = bytes;
      uploadLine();
    },
    classifyStarted(total) {
      classifyStarted = last = now();
      opts.write(`waiting for ${total} files to be classified`);
    },
    classified(done, total) {
      if (done === lastDone || !due(false)) return;
      lastDone = done;
      const { rate, etaMs } = rateAndEta(done, total, now() - classifyStarted);
      opts.write(`classified ${done}/${total} files, ${rate.toFixed(1)} files/s, ETA ${eta(etaMs)}`);
    },
    classifyEnded() {
      opts.write('classified: done');
    },
    importing(state, line) {
      // A new state is said at once; the same state's counts at most every `everyMs`.
      if (line === lastImport || (state === lastImportState && !due(false))) return;
      due(true);
      lastImport = line;
      lastImportState = state;
      opts.write(line);
    },
  };
}

const newBar = (stream: NodeJS.WriteStream, format: string) =>
  new SingleBar({ stream, format, hideCursor: true, clearOnComplete: false, fps: 10, barsize: 24, etaBuffer: 50 }, undefined);

/** The upload bar's figures: bytes sent of the total, the rates of files and bytes since `started`, the time left. */
function uploadPayload(sent: { bytes: number; totalBytes: number; files: number; totalFiles: number }, started: number) {
  const { bytes, totalBytes, files, totalFiles } = sent;
  const { rate, etaMs } = rateAndEta(bytes, totalBytes, Date.now() - started);
  const filesRate = rateAndEta(files, totalFiles, Date.now() - started).rate;
  return {
    bytes: formatBytes(bytes),
    totalBytes: formatBytes(totalBytes),
    rate: `${filesRate.toFixed(1)} files/s, ${formatBytes(rate)}/s`,
    left: eta(etaMs),
  };
}

/** A redrawn bar on a terminal (cli-progress), notes printed above it. */
export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): ProgressReporter {
  let bar: SingleBar | undefined;
  let started = 0;
  let bytes = 0;
  let totalBytes = 0;
  let files = 0;
  let totalFiles = 0;
  /** The import's line, redrawn in place until a bar or a note takes the terminal. */
  let importLine: string | undefined;
  const endImportLine = () => {
    if (importLine !== undefined) stream.write('\n');
    importLine = undefined;
  };
  return {
    uploadStarted(f, b) {
      started = Date.now();
      totalFiles = f;
      totalBytes = b;
      bar = newBar(stream, 'uploading   {bar} {value}/{total} files | {bytes}/{totalBytes} | {rate} | ETA {left}');
      bar.start(f, 0, uploadPayload({ bytes, totalBytes, files, totalFiles }, started));
    },
    fileUploaded(b) {
      files++;
      bytes += b;
      // The walk's estimate can be short (files added meanwhile): grow the total rather than overflow it.
      if (files > totalFiles) bar?.setTotal((totalFiles = files));
      bar?.update(files, uploadPayload({ bytes, totalBytes, files, totalFiles }, started));
    },
    note(line) {
      if (bar) {
        // Clear the bar's line, print the note, let the bar redraw below it.
        stream.write(`\r\x1b[2K${line}\n`);
        bar.render();
      } else if (importLine !== undefined) {
        stream.write(`\r\x1b[2K${line}\n${importLine}`);
      } else {
        stream.write(`${line}\n`);
      }
    },
    uploadEnded() {
      totalFiles = files;
      totalBytes = bytes;
      bar?.setTotal(files);
      bar?.update(files, uploadPayload({ bytes, totalBytes, files, totalFiles }, started));
      bar?.stop();
      bar = undefined;
    },
    classifyStarted(total) {
      endImportLine();
      started = Date.now();
      bar = newBar(stream, 'classifying {bar} {value}/{total} files | {rate} files/s | ETA {left}');
      bar.start(total, 0, { rate: '0.0', left: '--' });
    },
    classified(done, total) {
      const { rate, etaMs } = rateAndEta(done, total, Date.now() - started);
      bar?.setTotal(total);
      bar?.update(done, { rate: rate.toFixed(1), left: eta(etaMs) });
    },
    classifyEnded() {
      bar?.stop();
      bar = undefined;
      endImportLine();
    },
    importing(_state, line) {
      if (line === importLine) return;
      importLine = line;
      // Cut at the terminal's width: a wrapped line would not be cleared by the next redraw.
      stream.write(`\r\x1b[2K${stream.columns ? line.slice(0, stream.columns - 1) : line}`);
    },
  };
}
