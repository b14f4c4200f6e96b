// The records the local queue (queue.ts) makes: a new message of a body, the dead letter of a message, and the
// messages a redrive makes of the dead-letter list.
import { createHash, randomUUID } from 'node:crypto';
import type { DeadLetter, DeadLetterList } from './dead-letter-list';
import { groupField, type Message } from './message';

/** A message sent now: available at once, never received yet. */
export function newMessage(body: string, groupId: string | undefined, keys: readonly string[]): Message {
  const now = Date.now();
  return {
    messageId: randomUUID(),
    body,
    md5OfBody: createHash('md5').update(body).digest('hex'),
    ...groupField(groupId),
    sentAt: now,
    receiveCount: 0,
    availableAt: now,
    keys,
  };
}

/** The dead letter recording a message, with its human description. */
export function deadLetterOf(message: Message, description: string): DeadLetter {
  return {
    messageId: message.messageId,
    body: message.body,
    ...groupField(message.groupId),
    description,
    receiveCount: message.receiveCount,
    sentAt: new Date(message.sentAt).toISOString(),
    deadLetteredAt: new Date().toISOString(),
    lastError: message.lastError ?? 'unknown',
  };
}

/**
 * Sends every dead letter back with `send` and empties the list; those `send` refused (a full disk) stay dead letters.
 * Returns how many letters there were.
 */
export function redriveLetters(
  dead: DeadLetterList,
  send: (body: string, options: { groupId?: string }) => void,
  log: (line: string) => void,
): number {
  const letters = dead.takeAll();
  let sent = 0;
  try {
    for (const letter of letters) {
      send(letter.body, groupField(letter.groupId));
      sent += 1;
    }
  } finally {
    // Those the journal refused (a full disk) stay dead letters.
    dead.putBack(letters.slice(sent));
  }
  if (letters.length) log(`[queue] redrove ${letters.length} dead letter(s) to the queue`);
  return letters.length;
}

/** Removes the dead letters about any of `keys` (keysOf a letter's body); returns how many. */
export function forgetLettersAbout(
  dead: DeadLetterList,
  keysOf: ((body: string) => string[]) | undefined,
  keys: ReadonlySet<string>,
): number {
  if (!keysOf || keys.size === 0) return 0;
  return dead.forget((letter) => keysOf(letter.body).some((key) => keys.has(key)));
}

/** The log line of a message moved to the dead letters (and their file). */
export function deadLetteredLine(letter: DeadLetter, dlqFile: string | undefined): string {
  return (
    `[queue] dead-lettered ${letter.description} after ${letter.receiveCount} receives (${letter.lastError})` +
    (dlqFile ? ` → ${dlqFile}` : '')
  );
}
