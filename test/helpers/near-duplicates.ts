// The near-duplicate study set, generated with sharp from the fixture photos (test/fixtures/PROVENANCE.md): each
// photo with its re-encodings, resizes, crops and mirrored copy, plus flat images. The unit tests of the grouping
// and the similar bench (which measures precision and recall per threshold) both read it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp, { type Region, type Sharp } from 'sharp';

export const STUDY_PHOTOS = [
  'astronaut.png',
  'brick.png',
  'camera.png',
  'chelsea.png',
  'clock_motion.png',
  'coffee.png',
  'grass.png',
  'gravel.png',
  'rocket.jpg',
] as const;

/** What a study image is to its photo. */
export type VariantKind = 'original' | 'reencode' | 'resize' | 'crop' | 'mirror' | 'flat';

export interface StudyImage {
  /** `photo/variant`, unique in the set. */
  name: string;
  /** The source photo's file name; the flat images each have their own. */
  photo: string;
  kind: VariantKind;
  bytes: Buffer;
}

type Edit = (image: Sharp, width: number, height: number) => Sharp;

/** Variants a user would call "the same picture": another encoding, another size, a few percent cropped. */
const NEAR_DUPLICATES: { name: string; kind: VariantKind; edit: Edit }[] = [
  { name: 'jpeg-q90', kind: 'reencode', edit: (i) => i.jpeg({ quality: 90 }) },
  { name: 'jpeg-q70', kind: 'reencode', edit: (i) => i.jpeg({ quality: 70 }) },
  { name: 'jpeg-q40', kind: 'reencode', edit: (i) => i.jpeg({ quality: 40 }) },
  { name: 'jpeg-q15', kind: 'reencode', edit: (i) => i.jpeg({ quality: 15 }) },
  { name: 'webp-q80', kind: 'reencode', edit: (i) => i.webp({ quality: 80 }) },
  { name: 'webp-q50', kind: 'reencode', edit: (i) => i.webp({ quality: 50 }) },
  { name: 'png-grey', kind: 'reencode', edit: (i) => i.greyscale().png() },
  { name: 'resize-75', kind: 'resize', edit: (i, w) => i.resize(Math.round(w * 0.75)).png() },
  { name: 'resize-50', kind: 'resize', edit: (i, w) => i.resize(Math.round(w * 0.5)).jpeg({ quality: 85 }) },
  { name: 'resize-25', kind: 'resize', edit: (i, w) => i.resize(Math.round(w * 0.25)).webp({ quality: 80 }) },
  { name: 'resize-200', kind: 'resize', edit: (i, w) => i.resize(w * 2).jpeg({ quality: 85 }) },
  { name: 'resize-stretch', kind: 'resize', edit: (i, w, h) => i.resize(Math.round(w * 0.9), Math.round(h * 0.6), { fit: 'fill' }).png() },
  {
    name: 'crop-sides-3pc',
    kind: 'crop',
    edit: (i, w, h) => i.extract(inset(w, h, 0.03, 0.03, 0.03, 0.03)).png(),
  },
  {
    name: 'crop-left-5pc',
    kind: 'crop',
    edit: (i, w, h) => i.extract(inset(w, h, 0.05, 0, 0, 0)).jpeg({ quality: 85 }),
  },
  {
    name: 'crop-sides-5pc',
    kind: 'crop',
    edit: (i, w, h) => i.extract(inset(w, h, 0.05, 0.05, 0.05, 0.05)).jpeg({ quality: 85 }),
  },
];

/** The region left after cutting the given fractions off the left, top, right and bottom. */
function inset(width: number, height: number, left: number, top: number, right: number, bottom: number): Region {
  const l = Math.round(width * left);
  const t = Math.round(height * top);
  return { left: l, top: t, width: width - l - Math.round(width * right), height: height - t - Math.round(height * bottom) };
}

const FIXTURES = path.join(__dirname, '..', 'fixtures');

export async function photoVariants(photo: string): Promise<StudyImage[]> {
  const original = readFileSync(path.join(FIXTURES, photo));
  const { width, height } = await sharp(original).metadata();
  if (!width || !height) throw new Error(`${photo} has no dimensions`);
  const out: StudyImage[] = [{ name: `${photo}/original`, photo, kind: 'original', bytes: original }];
  for (const v of NEAR_DUPLICATES) {
    out.push({ name: `${photo}/${v.name}`, photo, kind: v.kind, bytes: await v.edit(sharp(original), width, height).toBuffer() });
  }
  out.push({ name: `${photo}/mirror`, photo, kind: 'mirror', bytes: await sharp(original).flop().png().toBuffer() });
  out.push({
    name: `${photo}/mirror-jpeg-q70`,
    photo,
    kind: 'mirror',
    bytes: await sharp(original).flop().jpeg({ quality: 70 }).toBuffer(),
  });
  return out;
}

/** Solid colours and smooth gradients, losslessly and lossily encoded: pictures a pHash says nothing about. */
export async function flatImages(): Promise<StudyImage[]> {
  const out: StudyImage[] = [];
  const add = async (name: string, image: Sharp): Promise<void> => {
    const bytes = await image.toBuffer();
    out.push({ name: `flat/${name}`, photo: `flat/${name}`, kind: 'flat', bytes });
  };
  const solids: [string, { r: number; g: number; b: number }][] = [
    ['black', { r: 0, g: 0, b: 0 }],
    ['white', { r: 255, g: 255, b: 255 }],
    ['grey', { r: 128, g: 128, b: 128 }],
    ['red', { r: 220, g: 30, b: 30 }],
    ['sky', { r: 120, g: 170, b: 230 }],
  ];
  for (const [name, background] of solids) {
    const solid = (): Sharp => sharp({ create: { width: 400, height: 300, channels: 3, background } });
    await add(`${name}.png`, solid().png());
    await add(`${name}.jpg`, solid().jpeg({ quality: 60 }));
  }
  const gradients: [string, (x: number, y: number) => number][] = [
    ['horizontal', (x) => x / 399],
    ['vertical', (_, y) => y / 299],
    ['diagonal', (x, y) => (x / 399 + y / 299) / 2],
    ['reverse', (x) => 1 - x / 399],
    ['radial', (x, y) => Math.min(1, Math.hypot(x - 200, y - 150) / 250)],
    ['faint', (x) => 0.45 + (0.1 * x) / 399],
  ];
  for (const [name, f] of gradients) {
    const px = Buffer.alloc(400 * 300 * 3);
    for (let y = 0; y < 300; y++) {
      for (let x = 0; x < 400; x++) {
        const v = f(x, y);
        px.set([Math.round(40 + 200 * v), Math.round(60 + 150 * v), Math.round(200 - 120 * v)], (y * 400 + x) * 3);
      }
    }
    const gradient = (): Sharp => sharp(px, { raw: { width: 400, height: 300, channels: 3 } });
    await add(`${name}.png`, gradient().png());
    await add(`${name}.jpg`, gradient().jpeg({ quality: 60 }));
  }
  // A solid colour with faint sensor-like noise: flat to the eye, not to the bytes.
  const noisy = Buffer.alloc(400 * 300 * 3);
  let seed = 7;
  for (let i = 0; i < noisy.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    noisy[i] = 128 + ((seed >>> 24) % 5) - 2;
  }
  await add('noisy-grey.png', sharp(noisy, { raw: { width: 400, height: 300, channels: 3 } }).png());
  return out;
}

export async function studySet(): Promise<StudyImage[]> {
  const photos = await Promise.all(STUDY_PHOTOS.map((p) => photoVariants(p)));
  return [...photos.flat(), ...(await flatImages())];
}
