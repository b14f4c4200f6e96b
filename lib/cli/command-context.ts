// What a command writes to and reads from: the environment, stdout and stderr, and the pauses --wait takes.
import type { Writable } from 'node:stream';

export interface CommandContext {
  env: NodeJS.ProcessEnv;
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  /** Pause between two reads of a batch being classified. */
  pollMs?: number;
  /** How long --wait sees nothing move before it says why (default ICECAT_WAIT_STALL_SECONDS, 30 s). */
  stallMs?: number;
}
