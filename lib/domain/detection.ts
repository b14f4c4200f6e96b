// What a detector answers for an image: its labels (trimmed to the stored ones), the boxes it drew, the cats it found,
// the model that answered; and a batch's counts of labels and models.
export interface Label {
  name: string;
  confidence: number;
}

/** Trimmed DetectLabels answer: what a debugger needs, without boxes or raw payload. */
export interface TrimmedLabels {
  model: string;
  labels: { name: string; confidence: number; parents: string[]; instances: number }[];
}

/** A box DetectLabels drew around one instance of a label other than Cat, as ratios of the image's sides. */
export interface NamedBox {
  name: string;
  confidence: number;
  box: { left: number; top: number; width: number; height: number };
}

/**
 * The model that gave an answer (docs/decisions/0031-model-versions.md): on AWS `rekognition-detect-labels` and
 * DetectLabels' LabelModelVersion; locally the model's name and the versions of its file and of its confidence mapping.
 */
export interface ModelVersion {
  name: string;
  version: string;
}

/** The model that classified an image and the boxes it drew of the labels other than Cat (the MegaDetector export's). */
export interface Detections {
  model: string;
  boxes: NamedBox[];
}

/** One cat DetectLabels found, with its box as ratios of the image's sides (Rekognition's BoundingBox). */
export interface CatInstance {
  confidence: number;
  box: { left: number; top: number; width: number; height: number };
}

/** A label and how many distinct images of a batch carry it at the batch's threshold. */
/** A model and how many of a batch's classified images it answered (the summary's `models`). */
export interface ModelCount extends ModelVersion {
  images: number;
}

export interface LabelCount {
  name: string;
  images: number;
}
