// What a command writes to and reads from: the CLI's configuration, stdout and stderr, and the pauses --wait takes.
import type { Writable } from 'node:stream';
import type { CliConfig } from './config';

export interface CommandContext {
  /** Read once from the environment when the CLI starts (lib/cli/config.ts loadCliConfig). */
  config: CliConfig;
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  /** Pause between two reads of a batch being classified. */
  pollMs?: number;
}
