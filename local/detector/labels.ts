// COCO-80 classes mapped onto Rekognition's label vocabulary: names, ancestors (Parents), aliases and
// categories, and the label list DetectLabels answers (confidence floor, GeneralLabels filters, cap).
// Pure: no model, no network.
import { labelConfidence, MODEL_SCALES, type ModelScale } from './scales';
import { scoreToConfidence } from './thresholds';

/** The detector's 80 classes, in the order of its class index. */
export const COCO_CLASSES = [
  'person',
  'bicycle',
  'car',
  'motorcycle',
  'airplane',
  'bus',
  'train',
  'truck',
  'boat',
  'traffic light',
  'fire hydrant',
  'stop sign',
  'parking meter',
  'bench',
  'bird',
  'cat',
  'dog',
  'horse',
  'sheep',
  'cow',
  'elephant',
  'bear',
  'zebra',
  'giraffe',
  'backpack',
  'umbrella',
  'handbag',
  'tie',
  'suitcase',
  'frisbee',
  'skis',
  'snowboard',
  'sports ball',
  'kite',
  'baseball bat',
  'baseball glove',
  'skateboard',
  'surfboard',
  'tennis racket',
  'bottle',
  'wine glass',
  'cup',
  'fork',
  'knife',
  'spoon',
  'bowl',
  'banana',
  'apple',
  'sandwich',
  'orange',
  'broccoli',
  'carrot',
  'hot dog',
  'pizza',
  'donut',
  'cake',
  'chair',
  'couch',
  'potted plant',
  'bed',
  'dining table',
  'toilet',
  'tv',
  'laptop',
  'mouse',
  'remote',
  'keyboard',
  'cell phone',
  'microwave',
  'oven',
  'toaster',
  'sink',
  'refrigerator',
  'book',
  'clock',
  'vase',
  'scissors',
  'teddy bear',
  'hair drier',
  'toothbrush',
] as const;

export type CocoClass = (typeof COCO_CLASSES)[number];

interface TaxonomyNode {
  /** Direct parents only; a label's Parents are all its ancestors, nearest first. */
  parents: string[];
  category: string;
  aliases?: string[];
}

const ANIMALS = 'Animals and Pets';
const VEHICLES = 'Vehicles and Automotive';
const FOOD = 'Food and Beverage';
const KITCHEN = 'Kitchen and Dining';
const FURNITURE = 'Furniture and Furnishings';
const TECH = 'Technology and Computing';
const SPORTS = 'Sports';
const APPAREL = 'Apparel and Accessories';
const HOME = 'Home and Indoors';
const EVERYDAY = 'Everyday Objects';
const SAFETY = 'Public Safety';
const TOYS = 'Hobbies and Interests';

/** Every label the local detector can answer, leaves (COCO classes) and their ancestors. */
const TAXONOMY: Record<string, TaxonomyNode> = {
  Person: { parents: [], category: 'Person Description', aliases: ['Human'] },

  Animal: { parents: [], category: ANIMALS },
  Mammal: { parents: ['Animal'], category: ANIMALS },
  Pet: { parents: ['Animal'], category: ANIMALS },
  Canine: { parents: ['Mammal'], category: ANIMALS },
  Wildlife: { parents: ['Animal'], category: ANIMALS },
  Livestock: { parents: ['Animal'], category: ANIMALS },
  Cattle: { parents: ['Livestock', 'Mammal'], category: ANIMALS },
  Bird: { parents: ['Animal'], category: ANIMALS },
  Cat: { parents: ['Pet', 'Mammal'], category: ANIMALS },
  Dog: { parents: ['Pet', 'Canine'], category: ANIMALS },
  Horse: { parents: ['Mammal'], category: ANIMALS },
  Sheep: { parents: ['Livestock', 'Mammal'], category: ANIMALS },
  Cow: { parents: ['Cattle'], category: ANIMALS },
  Elephant: { parents: ['Wildlife', 'Mammal'], category: ANIMALS },
  Bear: { parents: ['Wildlife', 'Mammal'], category: ANIMALS },
  Zebra: { parents: ['Wildlife', 'Mammal'], category: ANIMALS },
  Giraffe: { parents: ['Wildlife', 'Mammal'], category: ANIMALS },

  Transportation: { parents: [], category: VEHICLES },
  Vehicle: { parents: ['Transportation'], category: VEHICLES },
  Aircraft: { parents: ['Vehicle'], category: VEHICLES },
  Watercraft: { parents: ['Vehicle'], category: VEHICLES },
  Bicycle: { parents: ['Vehicle'], category: VEHICLES, aliases: ['Bike'] },
  Car: { parents: ['Vehicle'], category: VEHICLES, aliases: ['Automobile'] },
  Motorcycle: { parents: ['Vehicle'], category: VEHICLES, aliases: ['Motorbike'] },
  Airplane: { parents: ['Aircraft'], category: VEHICLES, aliases: ['Aeroplane'] },
  Bus: { parents: ['Vehicle'], category: VEHICLES },
  Train: { parents: ['Vehicle'], category: VEHICLES },
  Truck: { parents: ['Vehicle'], category: VEHICLES, aliases: ['Lorry'] },
  Boat: { parents: ['Watercraft'], category: VEHICLES },
  'Traffic Light': { parents: ['Light'], category: SAFETY },
  Light: { parents: [], category: HOME },
  'Fire Hydrant': { parents: ['Hydrant'], category: SAFETY },
  Hydrant: { parents: [], category: SAFETY },
  'Stop Sign': { parents: ['Road Sign'], category: SAFETY },
  'Road Sign': { parents: ['Sign'], category: SAFETY },
  Sign: { parents: ['Symbol'], category: 'Text and Documents' },
  Symbol: { parents: [], category: 'Text and Documents' },
  'Parking Meter': { parents: [], category: VEHICLES },

  Furniture: { parents: [], category: FURNITURE },
  Bench: { parents: ['Furniture'], category: FURNITURE },
  Chair: { parents: ['Furniture'], category: FURNITURE },
  Couch: { parents: ['Furniture'], category: FURNITURE, aliases: ['Sofa'] },
  Bed: { parents: ['Furniture'], category: FURNITURE },
  Table: { parents: ['Furniture'], category: FURNITURE },
  'Dining Table': { parents: ['Table'], category: FURNITURE },
  Plant: { parents: [], category: 'Plants and Flowers' },
  'Potted Plant': { parents: ['Plant'], category: 'Plants and Flowers' },
  Toilet: { parents: [], category: HOME },
  Sink: { parents: [], category: HOME },
  Appliance: { parents: [], category: HOME },
  Microwave: { parents: ['Appliance'], category: KITCHEN },
  Oven: { parents: ['Appliance'], category: KITCHEN },
  Toaster: { parents: ['Appliance'], category: KITCHEN },
  Refrigerator: { parents: ['Appliance'], category: KITCHEN, aliases: ['Fridge'] },
  'Blow Dryer': { parents: ['Appliance'], category: 'Beauty and Personal Care', aliases: ['Hair Drier'] },
  Toothbrush: { parents: ['Tool'], category: 'Beauty and Personal Care' },
  Tool: { parents: [], category: 'Tools and Machinery' },
  Scissors: { parents: ['Tool'], category: 'Tools and Machinery' },

  Electronics: { parents: [], category: TECH },
  Screen: { parents: ['Electronics'], category: TECH },
  TV: { parents: ['Screen'], category: TECH, aliases: ['Television'] },
  Computer: { parents: ['Electronics'], category: TECH },
  Laptop: { parents: ['Computer'], category: TECH },
  'Computer Hardware': { parents: ['Electronics'], category: TECH },
  Mouse: { parents: ['Computer Hardware'], category: TECH },
  Keyboard: { parents: ['Computer Hardware'], category: TECH },
  'Remote Control': { parents: ['Electronics'], category: TECH },
  Phone: { parents: ['Electronics'], category: TECH },
  'Mobile Phone': { parents: ['Phone'], category: TECH, aliases: ['Cell Phone'] },

  Accessories: { parents: [], category: APPAREL },
  Bag: { parents: ['Accessories'], category: APPAREL },
  Backpack: { parents: ['Bag'], category: APPAREL },
  Handbag: { parents: ['Bag'], category: APPAREL, aliases: ['Purse'] },
  Suitcase: { parents: ['Bag'], category: APPAREL, aliases: ['Luggage'] },
  Tie: { parents: ['Accessories'], category: APPAREL, aliases: ['Necktie'] },
  Umbrella: { parents: [], category: EVERYDAY },
  Book: { parents: ['Publication'], category: 'Text and Documents' },
  Publication: { parents: [], category: 'Text and Documents' },
  Clock: { parents: [], category: EVERYDAY },
  Vase: { parents: ['Pottery'], category: HOME },
  Pottery: { parents: [], category: HOME },
  Toy: { parents: [], category: TOYS },
  'Teddy Bear': { parents: ['Toy'], category: TOYS },
  Kite: { parents: ['Toy'], category: TOYS },
  Frisbee: { parents: ['Toy'], category: TOYS },

  Sport: { parents: [], category: SPORTS },
  Ski: { parents: ['Sport'], category: SPORTS },
  Snowboard: { parents: ['Sport'], category: SPORTS },
  Ball: { parents: ['Sport'], category: SPORTS },
  'Baseball Bat': { parents: ['Sport'], category: SPORTS },
  'Baseball Glove': { parents: ['Sport'], category: SPORTS },
  Skateboard: { parents: ['Sport'], category: SPORTS },
  Surfboard: { parents: ['Sport'], category: SPORTS },
  Racket: { parents: ['Sport'], category: SPORTS },
  'Tennis Racket': { parents: ['Racket'], category: SPORTS },

  Food: { parents: [], category: FOOD },
  Fruit: { parents: ['Food', 'Plant'], category: FOOD },
  Vegetable: { parents: ['Food', 'Plant'], category: FOOD },
  Dessert: { parents: ['Food'], category: FOOD },
  Banana: { parents: ['Fruit'], category: FOOD },
  Apple: { parents: ['Fruit'], category: FOOD },
  Orange: { parents: ['Fruit'], category: FOOD },
  Broccoli: { parents: ['Vegetable'], category: FOOD },
  Carrot: { parents: ['Vegetable'], category: FOOD },
  Sandwich: { parents: ['Food'], category: FOOD },
  'Hot Dog': { parents: ['Food'], category: FOOD },
  Pizza: { parents: ['Food'], category: FOOD },
  Donut: { parents: ['Dessert'], category: FOOD },
  Cake: { parents: ['Dessert'], category: FOOD },
  Cutlery: { parents: [], category: KITCHEN },
  Fork: { parents: ['Cutlery'], category: KITCHEN },
  Knife: { parents: ['Cutlery'], category: KITCHEN },
  Spoon: { parents: ['Cutlery'], category: KITCHEN },
  Glass: { parents: [], category: KITCHEN },
  'Wine Glass': { parents: ['Glass'], category: KITCHEN },
  Bottle: { parents: [], category: KITCHEN },
  Cup: { parents: [], category: KITCHEN },
  Bowl: { parents: [], category: KITCHEN },
};

/** The Rekognition label name for each COCO class. */
const LABEL_OF_CLASS: Record<CocoClass, string> = {
  person: 'Person',
  bicycle: 'Bicycle',
  car: 'Car',
  motorcycle: 'Motorcycle',
  airplane: 'Airplane',
  bus: 'Bus',
  train: 'Train',
  truck: 'Truck',
  boat: 'Boat',
  'traffic light': 'Traffic Light',
  'fire hydrant': 'Fire Hydrant',
  'stop sign': 'Stop Sign',
  'parking meter': 'Parking Meter',
  bench: 'Bench',
  bird: 'Bird',
  cat: 'Cat',
  dog: 'Dog',
  horse: 'Horse',
  sheep: 'Sheep',
  cow: 'Cow',
  elephant: 'Elephant',
  bear: 'Bear',
  zebra: 'Zebra',
  giraffe: 'Giraffe',
  backpack: 'Backpack',
  umbrella: 'Umbrella',
  handbag: 'Handbag',
  tie: 'Tie',
  suitcase: 'Suitcase',
  frisbee: 'Frisbee',
  skis: 'Ski',
  snowboard: 'Snowboard',
  'sports ball': 'Ball',
  kite: 'Kite',
  'baseball bat': 'Baseball Bat',
  'baseball glove': 'Baseball Glove',
  skateboard: 'Skateboard',
  surfboard: 'Surfboard',
  'tennis racket': 'Tennis Racket',
  bottle: 'Bottle',
  'wine glass': 'Wine Glass',
  cup: 'Cup',
  fork: 'Fork',
  knife: 'Knife',
  spoon: 'Spoon',
  bowl: 'Bowl',
  banana: 'Banana',
  apple: 'Apple',
  sandwich: 'Sandwich',
  orange: 'Orange',
  broccoli: 'Broccoli',
  carrot: 'Carrot',
  'hot dog': 'Hot Dog',
  pizza: 'Pizza',
  donut: 'Donut',
  cake: 'Cake',
  chair: 'Chair',
  couch: 'Couch',
  'potted plant': 'Potted Plant',
  bed: 'Bed',
  'dining table': 'Dining Table',
  toilet: 'Toilet',
  tv: 'TV',
  laptop: 'Laptop',
  mouse: 'Mouse',
  remote: 'Remote Control',
  keyboard: 'Keyboard',
  'cell phone': 'Mobile Phone',
  microwave: 'Microwave',
  oven: 'Oven',
  toaster: 'Toaster',
  sink: 'Sink',
  refrigerator: 'Refrigerator',
  book: 'Book',
  clock: 'Clock',
  vase: 'Vase',
  scissors: 'Scissors',
  'teddy bear': 'Teddy Bear',
  'hair drier': 'Blow Dryer',
  toothbrush: 'Toothbrush',
};

/** A label's vocabulary entry as DetectLabels reports it. */
export interface LabelInfo {
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
export interface Detection {
  classIndex: number;
  score: number;
  box: BoundingBox;
}

export interface Instance {
  BoundingBox: BoundingBox;
  Confidence: number;
}

export interface Label {
  Name: string;
  Confidence: number;
  Instances: Instance[];
  Parents: { Name: string }[];
  Aliases: { Name: string }[];
  Categories: { Name: string }[];
}

/** The GeneralLabels settings of a DetectLabels request. */
export interface GeneralLabelsFilters {
  LabelInclusionFilters?: string[];
  LabelExclusionFilters?: string[];
  LabelCategoryInclusionFilters?: string[];
  LabelCategoryExclusionFilters?: string[];
}

export interface LabelQuery {
  /** 0..100; labels and instances below it are left out. */
  minConfidence: number;
  maxLabels: number;
  filters?: GeneralLabelsFilters;
}

const round4 = (v: number): number => Math.round(v * 1e4) / 1e4;

/** A Cat score on Rekognition's 0..100 scale under CenterNet's mapping (thresholds.ts). */
export const toConfidence = (score: number): number => round4(scoreToConfidence(score));

/** Confidence as Rekognition reports it: a label's score through its model's mapping (scales.ts). */
export const labelToConfidence = (scale: ModelScale, label: string, score: number): number => round4(labelConfidence(scale, label, score));

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
export function toLabels(detections: Detection[], query: LabelQuery, scale: ModelScale = MODEL_SCALES.centernet): Label[] {
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

  const labels: Label[] = [];
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
