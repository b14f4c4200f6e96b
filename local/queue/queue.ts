// The local stand-in for an SQS queue and the Lambda event source mapping that polls it, in one process: batches,
// partial batch failures, retries with backoff, a dead-letter list after maxReceiveCount receives. With a journal
// (journal.ts) it is durable as SQS is: a message is on disk before `send` returns and leaves only when it is
// deleted (handled, or dead-lettered), so whatever was not deleted is delivered again by the next queue on the file.

import { randomBytes, randomUUID } from 'node:crypto';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { localReceiptHandle } from '../../lib/aws/message-visibility';
import { createLambdaContext } from '../contract';
import { KeyCounts } from './counts';
import { type DeadLetter, DeadLetterList } from './dead-letter-list';
import { QueueStoppedError } from './errors';
import { FairReadyList } from './fair-share';
import { IdleWaiters } from './idle-waiters';
import { QueueJournal } from './journal';
import { failuresOf, type Message, sqsRecord, withTimeout } from './message';
import type { LocalQueueOptions, QueueStats, Settings } from './options';
import { deadLetteredLine, deadLetterOf, forgetLettersAbout, newMessage, redriveLetters } from './records';
import { queueSettings, retryBackoffMs } from './settings';
import { Timers } from './timers';

/** An SQS queue feeding a Lambda handler through an event source mapping, in one process. */
export class LocalQueue {
  private readonly opts: Settings;
  private readonly journal: QueueJournal | undefined;
  private readonly ready: FairReadyList<Message>;
  private readonly delayed = new Set<Message>();
  private readonly timers = new Timers();
  private windowTimer: NodeJS.Timeout | undefined;
  private inFlightBatches = 0;
  /** Batches running beyond maxConcurrency (quiet groups only: the quietSlot option); at most maxQuietBatches. */
  private quietBatches = 0;
  private readonly quietSlot: boolean;
  private readonly maxQuietBatches: number;
  private readonly inFlightMessages = new Set<Message>();
  /** Messages in flight per group (the fair share's measure). */
  private readonly inFlightGroups = new KeyCounts();
  private readonly keyCounts = new KeyCounts();
  private holds = 0;
  private stopped = false;
  private paused: boolean;
  private readonly idleWaiters = new IdleWaiters();
  private readonly dead: DeadLetterList;
  private readonly running = new Set<Promise<void>>();
  private interrupted: string[] = [];
  /** Receipt handles start with it, so that ChangeMessageVisibility reaches this queue (lib/aws/message-visibility.ts). */
  private readonly token = randomUUID();
  private readonly unregisterVisibility: () => void;
  private readonly counters = { sent: 0, succeeded: 0, retried: 0, deadLettered: 0, invocations: 0, failedInvocations: 0, recovered: 0 };

  constructor(options: LocalQueueOptions) {
    this.opts = queueSettings(options);
    this.ready = new FairReadyList<Message>(this.opts.fairShare);
    this.quietSlot = this.opts.fairShare !== false && (options.quietSlot ?? true);
    this.maxQuietBatches = options.maxQuietBatches ?? 2 * this.opts.maxConcurrency;
    this.paused = options.paused ?? false;
    if (this.opts.batchSize < 1 || this.opts.batchSize > 10_000) throw new RangeError('batchSize must be 1–10000');
    if (this.opts.maxConcurrency < 1) throw new RangeError('maxConcurrency must be at least 1');
    if (!Number.isInteger(this.maxQuietBatches) || this.maxQuietBatches < 0)
      throw new RangeError('maxQuietBatches must be an integer of at least 0');
    this.dead = new DeadLetterList(this.opts.dlqFile, this.opts.log);
    this.unregisterVisibility =
      options.visibility?.register(this.token, (handle, seconds) => this.changeMessageVisibility(handle, seconds)) ?? (() => undefined);
    if (this.opts.journalFile) {
      this.journal = new QueueJournal(this.opts.journalFile, this.opts.journal);
      this.recover();
    }
  }

  /**
   * ChangeMessageVisibility for a message in flight: once its receive ends without a delete, it is delivered again
   * after `seconds` (instead of the backoff), also after a restart. False for a receipt handle not in flight here.
   */
  changeMessageVisibility(receiptHandle: string, seconds: number): boolean {
    const message = [...this.inFlightMessages].find((m) => m.receiptHandle === receiptHandle);
    if (!message) return false;
    message.visibleAt = Date.now() + seconds * 1000;
    this.journal?.visible(message.messageId, message.visibleAt);
    return true;
  }

  /**
   * SendMessage: queues a body, durably when the queue has a journal, and returns its message id. While the queue
   * stops, a message is still accepted into the journal (for the next start) until the journal closes.
   */
  send(body: string, options: { groupId?: string } = {}): string {
    if (this.stopped && !this.journal?.isOpen) throw new QueueStoppedError('the queue is stopped');
    const message = newMessage(body, options.groupId ?? this.opts.groupOf?.(body), this.opts.keysOf?.(body) ?? []);
    const { keys: _keys, ...journaled } = message;
    this.journal?.sent(journaled);
    this.counters.sent += 1;
    this.track(message, +1);
    this.ready.push(message);
    this.pump();
    return message.messageId;
  }

  /** Stops handing out batches (those in flight finish); messages are still accepted. resume() delivers again. */
  pause(): void {
    this.paused = true;
  }

  /** Whether deliveries are held (pause(), or the paused option until resume()). */
  isPaused(): boolean {
    return this.paused;
  }

  /** Starts delivering (see the paused option). */
  resume(): void {
    this.paused = false;
    this.pump();
  }

  /** Keeps the queue busy until the returned release is called (work about to be sent, e.g. a lookup). */
  hold(): () => void {
    this.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      this.notifyIfIdle();
    };
  }

  /** Whether a message not yet deleted (queued, waiting for a retry or in flight) is about this key (see keysOf). */
  hasMessageFor(key: string): boolean {
    return this.keyCounts.get(key) > 0;
  }

  get idle(): boolean {
    return this.ready.length === 0 && this.delayed.size === 0 && this.inFlightBatches === 0 && this.holds === 0;
  }

  /** Resolves when nothing is queued, waiting for a retry, in flight or held; rejects after timeoutMs. */
  whenIdle(timeoutMs = 60_000): Promise<void> {
    if (this.idle) return Promise.resolve();
    return this.idleWaiters.wait(timeoutMs, () => JSON.stringify(this.stats()));
  }

  stats(): QueueStats {
    return {
      ...this.counters,
      queued: this.ready.length,
      delayed: this.delayed.size,
      inFlight: this.inFlightMessages.size,
      groupsWaiting: this.ready.groupCount,
      groupsInFlight: this.inFlightGroups.size,
      idle: this.idle,
      ...(this.journal ? { journal: this.journal.stats() } : {}),
    };
  }

  /**
   * How many entries each of the queue's own collections holds (docs/design.md §4: what a long-running stack keeps).
   * Per-message ones empty once the messages are deleted; only the dead letters and the journal's live messages stay.
   */
  retained(): Record<
    'ready' | 'delayed' | 'inFlight' | 'keys' | 'timers' | 'running' | 'idleWaiters' | 'deadLetters' | 'interrupted',
    number
  > {
    return {
      ready: this.ready.length,
      delayed: this.delayed.size,
      inFlight: this.inFlightMessages.size,
      keys: this.keyCounts.size,
      timers: this.timers.size,
      running: this.running.size,
      idleWaiters: this.idleWaiters.size,
      deadLetters: this.dead.size,
      interrupted: this.interrupted.length,
    };
  }

  /** The dead-letter list: earlier runs' (from dlqFile) then this run's. */
  deadLetters(): DeadLetter[] {
    return this.dead.list();
  }

  /**
   * Sends every dead letter back to the queue as a new message (as SQS's dead-letter redrive does), once the cause is
   * fixed, and empties the list and its file. Returns how many were sent.
   */
  redrive(): number {
    return redriveLetters(this.dead, (body, options) => this.send(body, options), this.opts.log);
  }

  /** Removes the dead letters about any of `keys` (see keysOf), e.g. once their objects were queued again; returns how many. */
  forgetDeadLettersFor(keys: ReadonlySet<string>): number {
    return forgetLettersAbout(this.dead, this.opts.keysOf, keys);
  }

  /**
   * Stops polling and waits up to drainTimeoutMs for the batches in flight. Whatever is not deleted by then (queued,
   * waiting for a retry, or still running) stays in the journal for the next queue on the file.
   */
  async stop(drainTimeoutMs = 10_000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unregisterVisibility();
    this.timers.clearAll();
    if (this.windowTimer) clearTimeout(this.windowTimer);
    await this.settled(drainTimeoutMs);
    const left = this.ready.length + this.delayed.size + this.inFlightMessages.size;
    this.ready.clear();
    this.delayed.clear();
    this.journal?.close();
    if (left > 0 && this.journal) this.opts.log(`[queue] ${left} message(s) not yet handled stay in ${this.journal.file}`);
    this.notifyIfIdle();
  }

  /** The bodies of the messages found in the journal that had already been received: their handling was cut short. */
  interruptedBodies(): string[] {
    return [...this.interrupted];
  }

  /** Resolves once no handler invocation is running any more (after stop, those that outlived the drain), or after timeoutMs. */
  async settled(timeoutMs: number): Promise<void> {
    if (this.running.size === 0) return;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.running]), new Promise((resolve) => (timeout = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timeout);
  }

  /** Delivers again what the journal holds; a message already received maxReceiveCount times goes to the dead letters. */
  private recover(): void {
    const messages = this.journal?.messages() ?? [];
    const now = Date.now();
    this.interrupted = messages.filter((m) => m.receiveCount > 0).map((m) => m.body);
    for (const saved of messages) {
      const message: Message = { ...saved, availableAt: now, keys: this.opts.keysOf?.(saved.body) ?? [] };
      this.track(message, +1);
      if (message.receiveCount >= this.opts.maxReceiveCount) {
        message.lastError = `still in flight when the queue stopped, at receive ${message.receiveCount}`;
        this.deadLetter(message);
      } else if (message.visibleAt !== undefined && message.visibleAt > now) {
        // Handed back for a set time before the stop (a claim's lease): it stays invisible until then.
        this.deliverLater(message, message.visibleAt - now);
      } else {
        this.ready.push(message);
      }
    }
    this.counters.recovered = messages.length;
    if (this.journal && this.journal.skippedAtOpen > 0) {
      this.opts.log(`[queue] skipped ${this.journal.skippedAtOpen} torn line(s) of ${this.journal.file}`);
    }
    if (messages.length > 0) {
      this.opts.log(`[queue] delivering again ${messages.length} message(s) not deleted before the last stop`);
      this.schedulePump();
    }
  }

  private track(message: Message, delta: 1 | -1): void {
    for (const key of message.keys) this.keyCounts.add(key, delta);
  }

  private countInFlight(message: Message, delta: 1 | -1): void {
    if (message.groupId !== undefined) this.inFlightGroups.add(message.groupId, delta);
  }

  private deleteMessage(message: Message): void {
    this.journal?.deleted(message.messageId);
    this.track(message, -1);
  }

  private schedulePump(): void {
    this.timers.after(0, () => this.pump());
  }

  private pump(): void {
    if (this.stopped || this.paused) return;
    for (;;) {
      if (this.ready.length === 0) return;
      const inFlightOf = (group: string) => this.inFlightGroups.get(group);
      const regular = this.inFlightBatches - this.quietBatches < this.opts.maxConcurrency;
      const quiet = !regular && this.quietSlot && this.quietBatches < this.maxQuietBatches;
      // The batching window: from the oldest message a batch may take, until it could be full.
      let waiting = this.ready.length;
      let oldestAt = (this.ready.oldest() as Message).availableAt;
      if (quiet) {
        ({ count: waiting, oldestAvailableAt: oldestAt } = this.ready.quietWaiting(inFlightOf, this.inFlightMessages.size));
        if (waiting === 0) return;
      } else if (!regular) {
        return;
      }
      const windowEnds = oldestAt + this.opts.batchWindowMs;
      if (waiting < this.opts.batchSize && Date.now() < windowEnds) {
        if (!this.windowTimer) {
          this.windowTimer = setTimeout(() => {
            this.windowTimer = undefined;
            this.pump();
          }, windowEnds - Date.now());
        }
        return;
      }
      const batch = this.ready.take(this.opts.batchSize, inFlightOf, this.inFlightMessages.size, { quietOnly: quiet });
      if (batch.length === 0) return;
      const run = this.invoke(batch, quiet)
        .finally(() => {
          this.running.delete(run);
        })
        .then(() => this.pump());
      this.running.add(run);
    }
  }

  /** One handler invocation; `quiet`: a batch beside the full slots (the quietSlot option). */
  private async invoke(batch: Message[], quiet: boolean): Promise<void> {
    this.inFlightBatches += 1;
    if (quiet) this.quietBatches += 1;
    this.counters.invocations += 1;
    const now = Date.now();
    for (const message of batch) {
      message.receiveCount += 1;
      message.firstReceiveAt ??= now;
      delete message.visibleAt;
      this.inFlightMessages.add(message);
      this.countInFlight(message, +1);
      this.journal?.received(message.messageId, message.receiveCount, now);
    }
    const event: SQSEvent = { Records: batch.map((m) => this.toRecord(m)) };
    const context = createLambdaContext(this.opts.functionName, this.opts.invocationTimeoutMs, randomUUID());
    let failed: Map<Message, string>;
    try {
      const response = await withTimeout(this.opts.handler(event, context), this.opts.invocationTimeoutMs);
      failed = failuresOf(batch, response, this.opts.log);
    } catch (err) {
      this.counters.failedInvocations += 1;
      const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      this.opts.log(`[queue] handler failed for a batch of ${batch.length}: ${reason}`);
      failed = new Map(batch.map((m) => [m, reason]));
    }
    for (const message of batch) {
      this.inFlightMessages.delete(message);
      this.countInFlight(message, -1);
      delete message.receiptHandle;
      const reason = failed.get(message);
      if (reason === undefined) {
        this.counters.succeeded += 1;
        this.deleteMessage(message);
      } else {
        this.retryOrDeadLetter(message, reason);
      }
    }
    this.inFlightBatches -= 1;
    if (quiet) this.quietBatches -= 1;
    this.pump();
    this.notifyIfIdle();
  }

  private retryOrDeadLetter(message: Message, reason: string): void {
    message.lastError = reason;
    if (message.receiveCount >= this.opts.maxReceiveCount) {
      this.deadLetter(message);
      return;
    }
    this.counters.retried += 1;
    // Finished after stop(): the journal keeps it for the next start.
    if (this.stopped) return;
    const backoff = retryBackoffMs(this.opts, message.receiveCount);
    this.deliverLater(message, message.visibleAt !== undefined ? Math.max(0, message.visibleAt - Date.now()) : backoff);
  }

  private deliverLater(message: Message, delay: number): void {
    message.availableAt = Date.now() + delay;
    this.delayed.add(message);
    this.timers.after(delay, () => {
      this.delayed.delete(message);
      message.availableAt = Date.now();
      this.ready.push(message);
      this.pump();
    });
  }

  /** Moves a message to the dead-letter list: the letter is on disk before the message leaves the journal. */
  private deadLetter(message: Message): void {
    const letter = deadLetterOf(message, this.opts.describe(message.body));
    try {
      this.dead.add(letter);
    } catch (err) {
      // No room for the letter (a full disk): the message stays in the journal and is delivered again later.
      this.opts.log(`[queue] ${letter.description} not dead-lettered (${String(err)}): delivered again in ${this.opts.retryMaxMs} ms`);
      if (!this.stopped) this.deliverLater(message, this.opts.retryMaxMs);
      return;
    }
    this.counters.deadLettered += 1;
    this.deleteMessage(message);
    this.opts.log(deadLetteredLine(letter, this.opts.dlqFile));
  }

  private toRecord(message: Message): SQSRecord {
    message.receiptHandle = localReceiptHandle(this.token, randomBytes(96).toString('base64'));
    return sqsRecord(message, message.receiptHandle, this.opts.queueArn, this.opts.region);
  }

  private notifyIfIdle(): void {
    if (this.idle) this.idleWaiters.wakeAll();
  }
}
