// NanoDet run on one letterboxed image: the input as the model was trained on it (channels first, BGR, each channel
// normalised by ImageNet's mean and deviation: with plain 0..1 RGB, as @vladmandic/human feeds it, a clear cat photo
// scores 0.27 for Cat and a cup 0.39 under a 0.58 "toilet"), the outputs told apart by their shapes, then decoded.

import type { GraphModel } from '@tensorflow/tfjs-converter';
import * as tf from '@tensorflow/tfjs-core';
import type { DecodeOptions, Letterbox } from './decode';
import type { FoundObject } from './labels';
import { decodeNanoDet, NANODET_BINS, type NanoDetLevel } from './nanodet-decode';

/** NanoDet's training normalisation, per BGR channel. */
const MEAN_BGR = [103.53, 116.28, 123.675] as const;
const STD_BGR = [57.375, 57.12, 58.395] as const;
const STRIDES = [8, 16, 32] as const;

/** HWC RGB 0..255 pixels as NanoDet's CHW BGR normalised input. */
export function nanodetInput(rgb: Float32Array, size: number): Float32Array {
  const plane = size * size;
  const out = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) {
      // Channel c of the output is BGR's c: RGB's 2 - c.
      out[c * plane + i] = ((rgb[i * 3 + 2 - c] as number) - (MEAN_BGR[c] as number)) / (STD_BGR[c] as number);
    }
  }
  return out;
}

export async function runNanoDet(model: GraphModel, rgb: Float32Array, box: Letterbox, opts: DecodeOptions): Promise<FoundObject[]> {
  const size = box.size;
  const outputs = tf.tidy(() => model.execute(tf.tensor4d(nanodetInput(rgb, size), [1, 3, size, size])) as tf.Tensor[]);
  try {
    const levels: NanoDetLevel[] = [];
    for (const stride of STRIDES) {
      const cells = (size / stride) ** 2;
      const scores = outputs.find((t) => t.shape[1] === cells && t.shape[2] === opts.classCount);
      const boxes = outputs.find((t) => t.shape[1] === cells && t.shape[2] === 4 * NANODET_BINS);
      if (!scores || !boxes) throw new Error(`NanoDet gave no outputs for stride ${stride}`);
      levels.push({ stride, scores: await scores.data(), boxes: await boxes.data() });
    }
    return decodeNanoDet(levels, box, opts);
  } finally {
    tf.dispose(outputs);
  }
}
