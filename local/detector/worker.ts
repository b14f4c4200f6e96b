// One detector worker: loads the model (object-detector.ts) on its own thread or process and answers detections one at a
// time, decoding included, so neither the decode nor the inference runs on the thread that serves HTTP.
// The model and the model cache are the pool's (workerData in a thread, the first argument in a child process). Messages in: { id, image, fault? }; out: { ready, version } once, then { id, detections, tensors } or
// { id, error: { type, message } } per image. `fault` is the test hook of /__faults (crashNext, hangNext).
import { parentPort, workerData } from 'node:worker_threads';
import { DetectorError } from './errors';
import { liveTensors, loadDetector } from './object-detector';
import type { WorkerModel, WorkerReply, WorkerRequest } from './pool';

const send: (reply: WorkerReply) => void = parentPort ? (reply) => parentPort?.postMessage(reply) : (reply) => process.send?.(reply);

async function main(): Promise<void> {
  // A thread is told its model in workerData; a child process in its first argument (JSON).
  const told = (workerData ?? JSON.parse(process.argv[2] ?? '{}')) as WorkerModel;
  const detector = await loadDetector(told.model, told.modelCache);
  const onMessage = (request: WorkerRequest): void => {
    if (request.fault === 'crash') process.exit(70);
    if (request.fault === 'hang')
      for (;;) {
        // Spins until the pool gives up on this worker and stops it.
      }
    detector.detect(Buffer.from(request.image.buffer, request.image.byteOffset, request.image.byteLength)).then(
      (detections) => send({ id: request.id, detections, tensors: liveTensors() }),
      (err: unknown) => {
        if (!(err instanceof DetectorError)) console.error('[detector worker] detection failed:', err);
        // As the endpoint does for its own faults, the answer shows no internals.
        const error =
          err instanceof DetectorError
            ? { type: err.type, message: err.message }
            : { type: 'InternalServerError' as const, message: 'Internal server error' };
        send({ id: request.id, error, tensors: liveTensors() });
      },
    );
  };
  if (parentPort) parentPort.on('message', onMessage);
  else process.on('message', onMessage as (message: unknown) => void);
  send({ ready: true, version: detector.version, tensors: liveTensors() });
}

main().catch((err: unknown) => {
  console.error('[detector worker] failed to load the model:', err);
  process.exit(1);
});
