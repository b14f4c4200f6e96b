// COCO-80 classes mapped onto Rekognition's label vocabulary (taxonomy.ts): a label's ancestors and categories, and
// the label list DetectLabels answers (confidence floor, GeneralLabels filters, cap). Pure: no model, no network.
import { labelConfidence, MODEL_SCALES, type ModelScale } from './scales';
import { COCO_CLASSES, LABEL_OF_CLASS, TAXONOMY, type TaxonomyNode } from './taxonomy';
import { scoreToConfidence } from './thresholds';

/** A label's vocabulary entry as DetectLabels reports it. */
interface LabelInfo {
  name: string;
  /** All ancestors, nearest first. */
  parents: string[];
  aliases: string[];
  categories: string[];
}

function nodeOf(name: string): TaxonomyNode {
  const node = TAXONOMY[name];
  if (!node) throw new Error(`label "${name}" is not in the local taxonomy`);
  return node;
}

function allAncestors(name: string): Set<string> {
  const seen = new Set<string>();
  const queue = [...nodeOf(name).parents];
  while (queue.length > 0) {
    const next = queue.shift() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    queue.push(...nodeOf(next).parents);
  }
  return seen;
}

/** All ancestors, each once, the most specific first (Cat: Pet, Mammal, Animal). */
export function ancestorsOf(name: string): string[] {
  const depth = (label: string): number => allAncestors(label).size;
  return [...allAncestors(name)].sort((a, b) => depth(b) - depth(a));
}

export function labelInfo(name: string): LabelInfo {
  const node = nodeOf(name);
  return { name, parents: ancestorsOf(name), aliases: node.aliases ?? [], categories: [node.category] };
}

/** The Rekognition label for a class index of the detector; undefined outside 0..79. */
export function labelForClass(classIndex: number): string | undefined {
  const cls = COCO_CLASSES[classIndex];
  return cls === undefined ? undefined : LABEL_OF_CLASS[cls];
}

/** Every label name the local detector can return (leaves and ancestors). */
export const KNOWN_LABELS: readonly string[] = Object.keys(TAXONOMY);

// ---- DetectLabels' answer ----

/** Ratios of the image's width and height, as Rekognition's BoundingBox. */
export interface BoundingBox {
  Width: number;
  Height: number;
  Left: number;
  Top: number;
}

/** One object found by the model: class index, score in 0..1, box relative to the original image. */
export interface FoundObject {
  classIndex: number;
  score: number;
  box: BoundingBox;
}

interface Instance {
  BoundingBox: BoundingBox;
  Confidence: number;
}

export interface RekognitionLabel {
  Name: string;
  Confidence: number;
  Instances: Instance[];
  Parents: { Name: string }[];
  Aliases: { Name: string }[];
  Categories: { Name: string }[];
}

/** The GeneralLabels settings of a DetectLabels request. */
interface GeneralLabelsFilters {
  LabelInclusionFilters?: string[];
  LabelExclusionFilters?: string[];
  LabelCategoryInclusionFilters?: string[];
  LabelCategoryExclusionFilters?: string[];
}

interface LabelQuery {
  /** 0..100; labels and instances below it are left out. */
  minConfidence: number;
  maxLabels: number;
  filters?: GeneralLabelsFilters;
}

const round4 = (v: number): number => Math.round(v * 1e4) / 1e4;

/** A Cat score on Rekognition's 0..100 scale under CenterNet's mapping (thresholds.ts). */
export const toConfidence = (score: number): number => round4(scoreToConfidence(score));

/** Confidence as Rekognition reports it: a label's score through its model's mapping (scales.ts). */
const labelToConfidence = (scale: ModelScale, label: string, score: number): number => round4(labelConfidence(scale, label, score));

const lowerSet = (names: string[] | undefined): Set<string> => new Set((names ?? []).map((n) => n.toLowerCase()));

/**
 * Whether GeneralLabels filters keep a label: with any inclusion filter, only labels named by a label
 * inclusion filter or in an included category pass; exclusion filters (label or category) always win.
 * Names and categories compare case-insensitively.
 */
export function passesFilters(info: Pick<LabelInfo, 'name' | 'categories'>, filters: GeneralLabelsFilters = {}): boolean {
  const name = info.name.toLowerCase();
  const categories = info.categories.map((c) => c.toLowerCase());
  const includeLabels = lowerSet(filters.LabelInclusionFilters);
  const includeCategories = lowerSet(filters.LabelCategoryInclusionFilters);
  const excludeLabels = lowerSet(filters.LabelExclusionFilters);
  const excludeCategories = lowerSet(filters.LabelCategoryExclusionFilters);
  if (excludeLabels.has(name) || categories.some((c) => excludeCategories.has(c))) return false;
  if (includeLabels.size === 0 && includeCategories.size === 0) return true;
  return includeLabels.has(name) || categories.some((c) => includeCategories.has(c));
}

/**
 * DetectLabels' Labels from the model's detections: one label per detected class with its instances,
 * plus every ancestor label at the confidence of its best descendant (ancestors have no instances).
 * Sorted by confidence, most specific first on ties; then filtered and capped. Each label's Confidence is its score
 * through the model's mapping (`scale`, default CenterNet's).
 */
export function toLabels(
  detections: readonly FoundObject[],
  query: LabelQuery,
  scale: ModelScale = MODEL_SCALES.centernet,
): RekognitionLabel[] {
  const instancesByLabel = new Map<string, Instance[]>();
  const confidenceByLabel = new Map<string, number>();
  const depthByLabel = new Map<string, number>();

  for (const d of detections) {
    const name = labelForClass(d.classIndex);
    if (name === undefined) continue;
    const confidence = labelToConfidence(scale, name, d.score);
    if (confidence < query.minConfidence) continue;
    const instances = instancesByLabel.get(name) ?? [];
    instances.push({ BoundingBox: d.box, Confidence: confidence });
    instancesByLabel.set(name, instances);
    const ancestors = ancestorsOf(name);
    depthByLabel.set(name, ancestors.length);
    for (const label of [name, ...ancestors]) {
      confidenceByLabel.set(label, Math.max(confidenceByLabel.get(label) ?? 0, confidence));
      if (!depthByLabel.has(label)) depthByLabel.set(label, ancestorsOf(label).length);
    }
  }

  const labels: RekognitionLabel[] = [];
  for (const [name, confidence] of confidenceByLabel) {
    const info = labelInfo(name);
    if (!passesFilters(info, query.filters)) continue;
    labels.push({
      Name: name,
      Confidence: confidence,
      Instances: (instancesByLabel.get(name) ?? []).sort((a, b) => b.Confidence - a.Confidence),
      Parents: info.parents.map((Name) => ({ Name })),
      Aliases: info.aliases.map((Name) => ({ Name })),
      Categories: info.categories.map((Name) => ({ Name })),
    });
  }
  labels.sort(
    (a, b) =>
      b.Confidence - a.Confidence || (depthByLabel.get(b.Name) ?? 0) - (depthByLabel.get(a.Name) ?? 0) || a.Name.localeCompare(b.Name),
  );
  return labels.slice(0, query.maxLabels);
}
