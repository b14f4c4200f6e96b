// `icecat`: parses the command line, runs the command, and turns every failure into a message on stderr and an exit
// code from its error code (lib/cli/errors.ts: 0 ok, 2 some file failed or out of space, 1 anything else).

import { IceCatError } from '../errors';
import type { CommandContext } from './command-context';
import { commandHandlers } from './commands';
import { loadCliConfig } from './config';
import { EXIT, exitCodeFor } from './errors';
import { buildProgram } from './program';

export async function main(argv: string[], ctx: CommandContext): Promise<number> {
  const writeErr = (text: string) => ctx.stderr.write(text);
  const { run } = buildProgram(commandHandlers(ctx), { writeOut: (t) => ctx.stdout.write(t), writeErr });
  try {
    return await run(argv);
  } catch (err) {
    if (err instanceof IceCatError) {
      writeErr(`icecat: ${err.message}\n`);
      return exitCodeFor(err.code);
    }
    writeErr(`icecat: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return EXIT.failure;
  }
}

/** The process entry (bin/icecat.js): exits once stdout has drained, so piped output is never cut short. */
export function runCli(): void {
  let interrupted = false;
  process.on('SIGINT', () => {
    if (interrupted) process.exit(EXIT.interrupted);
    interrupted = true;
    process.stderr.write('\nicecat: interrupted\n');
    process.exit(EXIT.interrupted);
  });
  // A reader that goes away (`icecat images b | head`) is not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT.ok);
    throw err;
  });
  // The CLI's edge: its configuration read here, once, and handed to every command.
  let config;
  try {
    config = loadCliConfig();
  } catch (err) {
    process.stderr.write(`icecat: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = err instanceof IceCatError ? exitCodeFor(err.code) : EXIT.failure;
    return;
  }
  void main(process.argv.slice(2), { config, stdout: process.stdout, stderr: process.stderr }).then((code) => {
    process.exitCode = code;
  });
}
