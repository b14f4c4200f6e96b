// The detector's pool of workers (worker.ts): each loads the model once and runs one image at a time, decode and
// inference, off the thread that serves HTTP (and, in the stack, the API, S3 and DynamoDB). Images wait for a free
// worker by the fair-share rule of the queue (local/queue/fair-share.ts, docs/design.md §11), measured in worker time: in
// arrival order, except that while one client used most of the workers' recent time, other clients' images go first.
// A worker that dies or does not answer within the task timeout is replaced, and its image is given to another
// worker (once; an image that kills two workers is answered InternalServerError).
import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { FairReadyList, POOL_FAIR_SHARE, RecentUse } from '../queue/fair-share';
import { DetectorError, type RekognitionErrorType } from './errors';
import type { FoundObject } from './labels';
import type { DetectorModelName } from './model-catalog';
import { detectorWorkers } from './settings';

/** A test hook: the worker given the image exits (`crash`) or spins forever (`hang`) instead of answering. */
export type WorkerFault = 'crash' | 'hang';

export interface WorkerRequest {
  id: number;
  image: Uint8Array;
  fault?: WorkerFault;
}

export type WorkerReply =
  | { ready: true; version: string; tensors: number }
  | { id: number; detections: FoundObject[]; tensors: number }
  | { id: number; error: { type: RekognitionErrorType; message: string }; tensors: number };

/** How workers run: threads of this process (the default) or child processes (measured against; docs/design.md). */
type WorkerKind = 'thread' | 'process';

/** What each worker loads: the model, with the model cache its files may be in (told to it when it starts). */
export interface WorkerModel {
  model: DetectorModelName;
  modelCache: string;
}

/** The detector's settings a pool runs with (settings.ts), how its workers run, and where it logs. */
export interface DetectorPoolOptions extends WorkerModel {
  workers: number;
  /** Milliseconds one image may hold a worker before the worker counts as hung and is replaced. */
  taskTimeoutMs: number;
  kind?: WorkerKind;
  log?: (line: string) => void;
}

interface PoolStats {
  workers: number;
  /** Images waiting for a worker or in one. */
  pending: number;
  /** Live tensors summed over the workers, as each last reported. */
  tensors: number;
  /** Workers replaced after dying or hanging since the pool started. */
  replaced: number;
  /** Images given to another worker after theirs died or hung. */
  retried: number;
  /** Worker milliseconds per client, halving every 5 s: the fair share's measure. */
  recentWorkerMs: Record<string, number>;
}

interface Task {
  id: number;
  /** The client whose image it is (from the S3 key), when known: the fair share's group. */
  groupId?: string;
  /** Since when it waits (the fair list's field; unused here). */
  availableAt: number;
  image: Uint8Array;
  fault?: WorkerFault;
  attempts: number;
  resolve(detections: FoundObject[]): void;
  reject(err: Error): void;
}

/** What the pool needs of a thread or a child process. */
interface Channel {
  send(request: WorkerRequest): void;
  onMessage(listener: (reply: WorkerReply) => void): void;
  onExit(listener: (detail: string) => void): void;
  kill(): void;
}

const ENTRY = path.join(__dirname, 'worker-entry.cjs');
const ATTEMPTS = 2;

function threadChannel(model: WorkerModel): Channel {
  const worker = new Worker(ENTRY, { stdout: false, stderr: false, workerData: model });
  return {
    send: (request) => worker.postMessage(request),
    onMessage: (listener) => worker.on('message', listener),
    onExit: (listener) => {
      let error: Error | undefined;
      worker.on('error', (err) => (error = err));
      worker.on('exit', (code) => listener(error ? `failed: ${error.message}` : `exited with code ${code}`));
    },
    kill: () => void worker.terminate(),
  };
}

function processChannel(model: WorkerModel): Channel {
  const child: ChildProcess = fork(ENTRY, [JSON.stringify(model)], {
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return {
    send: (request) => child.send(request),
    onMessage: (listener) => child.on('message', listener as (message: unknown) => void),
    onExit: (listener) => child.on('exit', (code, signal) => listener(`exited with ${signal ?? `code ${code}`}`)),
    kill: () => void child.kill('SIGKILL'),
  };
}

class Slot {
  task?: Task;
  timer?: NodeJS.Timeout;
  tensors = 0;
  dead = false;
  constructor(readonly channel: Channel) {}
}

export class DetectorPool {
  readonly size: number;
  private readonly kind: WorkerKind;
  private readonly taskTimeoutMs: number;
  readonly model: DetectorModelName;
  private readonly modelCache: string;
  private readonly log: (line: string) => void;
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly queue = new FairReadyList<Task>(POOL_FAIR_SHARE);
  /** Worker time per client, recent first: the share the fair rule looks at. */
  private readonly use = new RecentUse();
  private nextId = 1;
  private closed = false;
  private replaced = 0;
  private retried = 0;
  private versionSeen = '';

  private constructor(opts: DetectorPoolOptions) {
    this.size = detectorWorkers(opts.workers);
    this.kind = opts.kind ?? 'thread';
    this.model = opts.model;
    this.modelCache = opts.modelCache;
    this.taskTimeoutMs = opts.taskTimeoutMs;
    this.log = opts.log ?? ((line) => console.warn(line));
  }

  /** A pool whose workers have all loaded the model. */
  static async start(opts: DetectorPoolOptions): Promise<DetectorPool> {
    const pool = new DetectorPool(opts);
    try {
      await Promise.all(Array.from({ length: pool.size }, () => pool.spawn()));
    } catch (err) {
      await pool.close();
      throw err;
    }
    return pool;
  }

  /** Names the model (every worker loads the same one). */
  get version(): string {
    return this.versionSeen;
  }

  stats(): PoolStats {
    let tensors = 0;
    let busy = 0;
    for (const slot of this.slots) {
      tensors += slot.tensors;
      if (slot.task) busy += 1;
    }
    return {
      workers: this.slots.size,
      pending: this.queue.length + busy,
      tensors,
      replaced: this.replaced,
      retried: this.retried,
      recentWorkerMs: this.use.snapshot(Date.now()),
    };
  }

  /** Objects in a JPEG or PNG image, as object-detector.ts's detect() finds them, on the next free worker. */
  detect(image: Buffer, fault?: WorkerFault, clientId?: string): Promise<FoundObject[]> {
    if (this.closed) return Promise.reject(new DetectorError('the detector is closing', { type: 'InternalServerError' }));
    return new Promise<FoundObject[]>((resolve, reject) => {
      const task: Task = { id: this.nextId++, image, fault, attempts: 0, availableAt: Date.now(), resolve, reject };
      if (clientId !== undefined) task.groupId = clientId;
      this.queue.push(task);
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.queue.drain()) task.reject(new DetectorError('the detector is closing', { type: 'InternalServerError' }));
    const exits: Promise<void>[] = [];
    for (const slot of this.slots) {
      exits.push(new Promise((resolve) => slot.channel.onExit(() => resolve())));
      this.retire(slot);
      slot.task?.reject(new DetectorError('the detector is closing', { type: 'InternalServerError' }));
      slot.task = undefined;
      slot.channel.kill();
    }
    this.slots.clear();
    this.idle.length = 0;
    await Promise.all(exits);
  }

  /** Starts a worker; resolves once its model is loaded (it is then idle), rejects if it dies first. */
  private spawn(): Promise<void> {
    const told: WorkerModel = { model: this.model, modelCache: this.modelCache };
    const slot = new Slot(this.kind === 'thread' ? threadChannel(told) : processChannel(told));
    this.slots.add(slot);
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      slot.channel.onMessage((reply) => {
        slot.tensors = reply.tensors;
        if ('ready' in reply) {
          ready = true;
          this.versionSeen = reply.version;
          if (this.closed) return;
          this.idle.push(slot);
          resolve();
          this.dispatch();
          return;
        }
        const task = slot.task;
        if (!task || task.id !== reply.id) return;
        clearTimeout(slot.timer);
        slot.task = undefined;
        this.use.end(task, Date.now());
        if ('error' in reply) task.reject(new DetectorError(reply.error.message, { type: reply.error.type }));
        else task.resolve(reply.detections);
        this.idle.push(slot);
        this.dispatch();
      });
      slot.channel.onExit((detail) => {
        if (slot.dead) return;
        this.retire(slot);
        if (this.closed) return;
        if (!ready) {
          reject(new Error(`a detector worker ${detail} before its model loaded`));
          return;
        }
        this.replace(slot, detail);
      });
    });
  }

  private retire(slot: Slot): void {
    slot.dead = true;
    clearTimeout(slot.timer);
    this.slots.delete(slot);
    const at = this.idle.indexOf(slot);
    if (at >= 0) this.idle.splice(at, 1);
  }

  /** A worker died or hung: its image goes to another worker (or fails after ATTEMPTS), and a new worker starts. */
  private replace(slot: Slot, detail: string): void {
    const task = slot.task;
    slot.task = undefined;
    if (task) this.use.end(task, Date.now());
    this.replaced += 1;
    this.log(`[detector] a worker ${detail}${task ? ` on image #${task.id} (attempt ${task.attempts})` : ''}: replacing it`);
    if (task) {
      if (task.attempts < ATTEMPTS) {
        this.retried += 1;
        this.queue.unshift(task);
      } else {
        task.reject(new DetectorError(`the image stopped ${ATTEMPTS} detector workers (${detail})`, { type: 'InternalServerError' }));
      }
    }
    this.spawn().catch((err: unknown) => {
      this.log(`[detector] ${String(err)}`);
      // With no worker left and none coming, waiting images would wait for ever.
      if (this.slots.size === 0) {
        for (const waiting of this.queue.drain()) {
          waiting.reject(new DetectorError('no detector worker could be started', { type: 'InternalServerError' }));
        }
      }
    });
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const slot = this.idle.shift() as Slot;
      const now = Date.now();
      const [task] = this.queue.take(1, (client) => this.use.of(client, now), this.use.total(now)) as [Task];
      if (task.groupId !== undefined) this.use.start(task, task.groupId, now);
      task.attempts += 1;
      slot.task = task;
      // The fault hook applies to the first attempt only: the retry shows the image is not lost.
      const fault = task.attempts === 1 ? task.fault : undefined;
      slot.timer = setTimeout(() => {
        this.log(`[detector] a worker took over ${this.taskTimeoutMs} ms on image #${task.id}: stopping it`);
        slot.channel.kill();
      }, this.taskTimeoutMs);
      slot.channel.send({ id: task.id, image: task.image, fault });
    }
  }
}
