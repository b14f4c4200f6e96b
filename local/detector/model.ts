// The offline object detector: the COCO-80 CenterNet (MobileNetV3) that @vladmandic/human ships in its
// tarball, run on tfjs-core with the WebAssembly backend. Loaded once per thread (each of the endpoint's workers,
// pool.ts, loads its own; loadDetector() alone runs it in-process); every detection runs through one serial queue,
// so one decoded image and one inference are in memory at a time.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { loadGraphModel, type GraphModel } from '@tensorflow/tfjs-converter';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import sharp, { type OutputInfo } from 'sharp';
import { COCO_CLASSES, type Detection } from './labels';
import { decodeDetections, letterbox, type Letterbox } from './decode';
import { SerialQueue } from './queue';
import { InvalidImageFormatError } from './errors';
import { CONFIDENCE_MAPPING_VERSION } from './thresholds';

const INPUT_SIZE = 512;
const OUTPUT_NODE = 'tower_0/detections';
/** Scores below 1 % are noise from the heatmap's tail; requests filter further by MinConfidence. */
const MIN_SCORE = 0.01;
const IOU_THRESHOLD = 0.5;
/** Decompression-bomb guard; Rekognition accepts at most 10,000 px a side anyway. */
const MAX_INPUT_PIXELS = 10_000 * 10_000;

/** The CenterNet's name in LabelModelVersion. */
export const CENTERNET_MODEL_NAME = 'centernet-mobilenetv3-coco80';

/**
 * A local model's LabelModelVersion: `local:<name>/<file version>+mapping.<mapping version>`, the name, the version of
 * the package shipping its file, and the version of its confidence mapping (thresholds.ts). The ingest splits it into
 * {name, version} (lib/model-version.ts parseModelVersion) without asking the detector anything else.
 */
export function localModelVersion(name: string, fileVersion: string, mappingVersion: number | string): string {
  if (!/^[\w.-]+$/.test(name)) throw new Error(`a local model's name must be letters, digits, '.', '_' or '-': ${name}`);
  if (!/^[\w.+-]+$/.test(`${fileVersion}${mappingVersion}`))
    throw new Error(`a local model's version has no spaces or '/': ${fileVersion}`);
  return `local:${name}/${fileVersion}+mapping.${mappingVersion}`;
}

export interface ObjectDetector {
  /** Names the model for DetectLabels' LabelModelVersion. */
  readonly version: string;
  /** Objects in a JPEG or PNG image, boxes relative to the (EXIF-oriented) image. */
  detect(image: Buffer): Promise<Detection[]>;
  /** Detections waiting or running. */
  readonly pending: number;
}

export interface ModelFiles {
  topology: string;
  weights: string;
  /** The version of the package that ships the weights. */
  packageVersion: string;
}

/**
 * The model's files inside the installed @vladmandic/human. Its `exports` map is malformed (it mixes
 * conditions and subpaths), so the files are found by walking up to node_modules, not by require.resolve.
 */
export function locateModelFiles(from: string = __dirname): ModelFiles {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'node_modules', '@vladmandic', 'human');
    const topology = path.join(pkg, 'models', 'centernet.json');
    if (existsSync(topology)) {
      const { version } = JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { version: string };
      return { topology, weights: path.join(pkg, 'models', 'centernet.bin'), packageVersion: version };
    }
    if (path.dirname(dir) === dir) throw new Error(`@vladmandic/human/models/centernet.json not found above ${from}`);
  }
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
export async function prepareInput(image: Buffer, size = INPUT_SIZE): Promise<{ pixels: Float32Array; box: Letterbox }> {
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

class CenterNetDetector implements ObjectDetector {
  private readonly queue: SerialQueue;

  constructor(
    private readonly model: GraphModel,
    readonly version: string,
  ) {
    this.queue = new SerialQueue();
  }

  get pending(): number {
    return this.queue.pending;
  }

  detect(image: Buffer): Promise<Detection[]> {
    return this.queue.run(async () => {
      const { pixels, box } = await prepareInput(image);
      const output = tf.tidy(() => {
        const input = tf.tensor4d(pixels, [1, INPUT_SIZE, INPUT_SIZE, 3]);
        return this.model.execute(input, OUTPUT_NODE) as tf.Tensor;
      });
      try {
        const rows = ((await output.array()) as number[][][])[0] ?? [];
        return decodeDetections(rows, box, { minScore: MIN_SCORE, iouThreshold: IOU_THRESHOLD, classCount: COCO_CLASSES.length });
      } finally {
        output.dispose();
      }
    });
  }
}

let loading: Promise<ObjectDetector> | undefined;

/** The process's detector, loaded on first use and shared by every caller. */
export function loadDetector(): Promise<ObjectDetector> {
  loading ??= (async () => {
    const files = locateModelFiles();
    await initBackend();
    const model = await loadGraph(files);
    return new CenterNetDetector(model, localModelVersion(CENTERNET_MODEL_NAME, files.packageVersion, CONFIDENCE_MAPPING_VERSION));
  })();
  // A failed load is not cached, so a later call can try again.
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

/** Tensors alive in the tfjs engine: constant between requests when nothing leaks. */
export const liveTensors = (): number => tf.memory().numTensors;
