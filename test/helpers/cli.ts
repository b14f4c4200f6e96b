// The `icecat` CLI run as a user runs it (node bin/icecat.js, a separate process) against the local stack, with the
// API's URL and a key in its environment and no AWS variables.
import { type ExecFileException, execFile } from 'node:child_process';
import path from 'node:path';
import { stackEnv } from '.';

const ROOT = path.join(__dirname, '..', '..');
export const BIN = path.join(ROOT, 'bin', 'icecat.js');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI's environment: the API and the key, no AWS variables. */
export function cliEnv(key: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')));
  return { ...env, ICECAT_API_URL: stackEnv('ICECAT_API_URL'), ICECAT_API_KEY: key, NO_COLOR: '1' };
}

export function icecat(args: string[], key: string, opts: { cwd?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: cliEnv(key), maxBuffer: 64 * 1024 * 1024, ...opts }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as ExecFileException).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Runs the CLI under a pseudo-terminal (util-linux `script`), as a user at a terminal sees it. */
export function icecatOnTerminal(args: string[], key: string): Promise<Run> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve) => {
    execFile('script', ['-qfec', command, '/dev/null'], { env: { ...cliEnv(key), COLUMNS: '200', LINES: '50' } }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as ExecFileException).code ?? 1) : 0, stdout, stderr });
    });
  });
}
