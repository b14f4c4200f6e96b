// The local detector's cost: model load, per-image latency at 640 px and 12 MP, the endpoint's round
// trip through the SDK, peak RSS, and the cat scores behind the local thresholds: the raw model scores
// and, on Rekognition's scale (local/detector/thresholds.ts), the separation at CAT_MIN_CONFIDENCE (the
// lowest cat, the highest non-cat). Measured in a fresh child process, so the load is a cold one and the
// peak RSS is the detector's own.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { headline as figure, percentile as percentileOf, pick, round, sized, type Headline } from './stats';
import { toConfidence } from '../local/detector/labels';
import { LOCAL_CAT_MIN_CONFIDENCE, LOCAL_REKOGNITION_MIN_CONFIDENCE, SCALE_KNOTS } from '../local/detector/thresholds';

const ROOT = path.join(__dirname, '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures');
const RUNS_640 = sized(20, 2);
const RUNS_12MP = sized(8, 1);

const percentile = (values: number[], p: number): number => round(percentileOf(values, p), 1);

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return [value, Number(process.hrtime.bigint() - start) / 1e6];
}

/** Runs in the child: everything measured, printed as one JSON line. */
async function measure(): Promise<Record<string, unknown>> {
  const { loadDetector, liveTensors } = await import('../local/detector/model');
  const { startDetectorServer } = await import('../local/detector/server');
  const { RekognitionClient, DetectLabelsCommand } = await import('@aws-sdk/client-rekognition');
  const rssBeforeMb = process.memoryUsage().rss / 2 ** 20;

  const [detector, modelLoadMs] = await timed(() => loadDetector());
  const chelsea = readFileSync(path.join(FIXTURES, 'chelsea.png'));
  const catScore = async (image: Buffer): Promise<number> =>
    Math.max(0, ...(await detector.detect(image)).filter((d) => d.classIndex === 15).map((d) => d.score));

  const [, firstInferenceMs] = await timed(() => detector.detect(chelsea));
  const tensorsBefore = liveTensors();

  const img640 = await sharp(chelsea).resize(640).jpeg({ quality: 90 }).toBuffer();
  const server = await startDetectorServer({ port: 0 });
  const client = new RekognitionClient({
    endpoint: server.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  });
  // In-process and through the endpoint alternately, so both see the same machine load.
  const lat640: number[] = [];
  const roundTrip: number[] = [];
  for (let i = 0; i < RUNS_640; i++) {
    lat640.push((await timed(() => detector.detect(img640)))[1]);
    roundTrip.push(
      (
        await timed(() =>
          client.send(new DetectLabelsCommand({ Image: { Bytes: img640 }, MinConfidence: LOCAL_REKOGNITION_MIN_CONFIDENCE })),
        )
      )[1],
    );
  }
  client.destroy();
  await server.close();

  // 4240 x 2830 = 12.0 MP, the size of a phone photo.
  const img12mp = await sharp(chelsea).resize(4240, 2830).jpeg({ quality: 90 }).toBuffer();
  const lat12mp: number[] = [];
  for (let i = 0; i < RUNS_12MP; i++) lat12mp.push((await timed(() => detector.detect(img12mp)))[1]);

  const colour = await catScore(chelsea);
  const scores = {
    catScoreChelsea: colour,
    catScoreChelseaGreyscale: await catScore(await sharp(chelsea).greyscale().png().toBuffer()),
    catScoreChelseaRotated90: await catScore(await sharp(chelsea).rotate(90).png().toBuffer()),
    catScoreChelseaRotated180: await catScore(await sharp(chelsea).rotate(180).png().toBuffer()),
    catScoreChelsea120px: await catScore(await sharp(chelsea).resize(120).png().toBuffer()),
    catScoreChelsea12MP: await catScore(img12mp),
    catScoreCoffee: await catScore(readFileSync(path.join(FIXTURES, 'coffee.png'))),
    catScoreAstronaut: await catScore(readFileSync(path.join(FIXTURES, 'astronaut.png'))),
    catScoreRocket: await catScore(readFileSync(path.join(FIXTURES, 'rocket.jpg'))),
  };

  // resourceUsage().maxRSS is in kilobytes: the process's high-water mark, read before the separation's
  // extra images so that it stays the detector's own.
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);

  // The separation on Rekognition's scale: the cat photo and the variants the local stack counts as
  // cats, against every non-cat fixture (test/fixtures/PROVENANCE.md). Upside-down and heavily blurred
  // cats are known misses (local/detector/README.md), so they are not among the cats.
  const cats: Record<string, Buffer> = {
    'chelsea.png': chelsea,
    'chelsea, JPEG q90 640 px': img640,
    'chelsea, 12 MP': img12mp,
    'chelsea, greyscale': await sharp(chelsea).greyscale().png().toBuffer(),
    'chelsea, rotated 90°': await sharp(chelsea).rotate(90).png().toBuffer(),
    'chelsea, 120 px wide': await sharp(chelsea).resize(120).png().toBuffer(),
    'chelsea, left 300×300 crop': await sharp(chelsea).extract({ left: 0, top: 0, width: 300, height: 300 }).png().toBuffer(),
    'chelsea, right 300×300 crop': await sharp(chelsea).extract({ left: 151, top: 0, width: 300, height: 300 }).png().toBuffer(),
  };
  const nonCats = ['coffee.png', 'astronaut.png', 'rocket.jpg', 'camera.png', 'clock_motion.png', 'brick.png', 'grass.png', 'gravel.png'];
  const onScale = async (entries: [string, Buffer][]): Promise<{ image: string; confidence: number }[]> => {
    const out: { image: string; confidence: number }[] = [];
    for (const [image, bytes] of entries) out.push({ image, confidence: round(toConfidence(await catScore(bytes)), 2) });
    return out.sort((a, b) => a.confidence - b.confidence);
  };
  const catConfidences = await onScale(Object.entries(cats));
  const nonCatConfidences = await onScale(nonCats.map((n) => [n, readFileSync(path.join(FIXTURES, n))]));
  const lowestCat = catConfidences[0]!;
  const highestNonCat = nonCatConfidences[nonCatConfidences.length - 1]!;

  const median640 = percentile(lat640, 50);
  const median12mp = percentile(lat12mp, 50);
  return {
    modelLoadMs: Math.round(modelLoadMs),
    firstInferenceMs: Math.round(firstInferenceMs),
    latency640Runs: RUNS_640,
    latency640MedianMs: median640,
    latency640P95Ms: percentile(lat640, 95),
    latency12mpRuns: RUNS_12MP,
    latency12mpMedianMs: median12mp,
    latency12mpP95Ms: percentile(lat12mp, 95),
    latency12mpOver640: Math.round((median12mp / median640) * 100) / 100,
    endpointRoundTrip640MedianMs: percentile(roundTrip, 50),
    endpointRoundTrip640P95Ms: percentile(roundTrip, 95),
    endpointOverheadMs: Math.round((percentile(roundTrip, 50) - median640) * 10) / 10,
    image12mpBytes: img12mp.length,
    rssBeforeLoadMb: Math.round(rssBeforeMb),
    peakRssMb,
    tensorsLeaked: liveTensors() - tensorsBefore,
    ...Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, round(v)])),
    catGreyscaleOverColour: round(scores.catScoreChelseaGreyscale / colour),
    catRotated90OverColour: round(scores.catScoreChelseaRotated90 / colour),
    scale: {
      knots: SCALE_KNOTS.map((k) => `${k.score}→${k.confidence}`).join(', '),
      catMinConfidence: LOCAL_CAT_MIN_CONFIDENCE,
      lowestCat,
      highestNonCat,
      marginAboveThreshold: round(lowestCat.confidence - LOCAL_CAT_MIN_CONFIDENCE, 2),
      marginBelowThreshold: round(LOCAL_CAT_MIN_CONFIDENCE - highestNonCat.confidence, 2),
      separated: lowestCat.confidence >= LOCAL_CAT_MIN_CONFIDENCE && highestNonCat.confidence < LOCAL_CAT_MIN_CONFIDENCE,
      cats: catConfidences.length,
      nonCats: nonCatConfidences.length,
    },
    model: detector.version,
  };
}

export default async function run(): Promise<Record<string, unknown>> {
  const child = spawn(process.execPath, ['--import', 'tsx', __filename, '--measure'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const line = stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`detector bench child failed (${code}): ${stderr.slice(-2000)}`);
  return JSON.parse(line) as Record<string, unknown>;
}

export function headline(r: Record<string, unknown>): Headline[] {
  return [
    figure('latency at 640 px, median ms (one worker)', pick(r, 'latency640MedianMs')),
    figure('model load ms', pick(r, 'modelLoadMs')),
    figure('peak RSS MB', pick(r, 'peakRssMb')),
    figure(
      `lowest cat, Confidence (${String(pick(r, 'scale', 'lowestCat', 'image') ?? '?')})`,
      pick(r, 'scale', 'lowestCat', 'confidence'),
      '>= 80',
    ),
    figure(
      `highest non-cat, Confidence (${String(pick(r, 'scale', 'highestNonCat', 'image') ?? '?')})`,
      pick(r, 'scale', 'highestNonCat', 'confidence'),
      '< 80',
    ),
  ];
}

if (require.main === module) {
  const measuring = process.argv.includes('--measure');
  (measuring ? measure() : run()).then(
    (result) => {
      console.log(measuring ? JSON.stringify(result) : JSON.stringify(result, null, 2));
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
