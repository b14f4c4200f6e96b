// The MegaDetector results file of a batch the stack really classified: the format's published rules hold (the
// helper's checks), every uploaded file has its entry, the cat's box is category 1, the failure says its code, and
// the CLI writes the same file. Images reused from an earlier batch carry the same detections as their original.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { uniqueId, uploadFile, waitForBridgeIdle } from '../helpers';
import { call, newClient, type TestClient } from '../helpers/api';
import { icecat } from '../helpers/cli';
import { megadetectorProblems } from '../helpers/megadetector-rules';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));

describe('the MegaDetector export of an ingested batch', () => {
  let client: TestClient;
  const batchId = uniqueId('md');
  let work: string;
  let text: string;
  let headers: Headers;

  beforeAll(async () => {
    client = await newClient('md');
    work = mkdtempSync(path.join(tmpdir(), 'icecat-md-'));
    const files: [string, Buffer][] = [
      ['cam1/chelsea.png', fixture('chelsea.png')],
      ['cam2/chelsea again.png', fixture('chelsea.png')],
      ['cam1/astronaut.png', fixture('astronaut.png')],
      ['cam1/grass.png', fixture('grass.png')],
      ['cam1/notes.png', Buffer.from('not an image')],
    ];
    for (const [name, bytes] of files) await uploadFile(`uploads/${client.clientId}/${batchId}/${name}`, bytes);
    await waitForBridgeIdle();
    await call('POST', `/v1/batches/${batchId}:close`, { key: client.key, body: {} });
    const res = await fetch(new URL(`/v1/batches/${batchId}/export?format=megadetector`, process.env.ICECAT_API_URL), {
      headers: { authorization: `Bearer ${client.key}` },
    });
    text = await res.text();
    headers = res.headers;
  }, 120_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('follows the format 1.6 rules, as a JSON attachment', () => {
    expect(megadetectorProblems(text)).toEqual([]);
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    expect(headers.get('content-disposition')).toBe(`attachment; filename="${batchId}.json"`);
  });

  it('has an entry per uploaded file, duplicates included, with the batch and its detector in info', async () => {
    const file = JSON.parse(text);
    const summary = (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).body;

    expect(file.images.map((i: { file: string }) => i.file).sort()).toEqual(
      ['cam1/astronaut.png', 'cam1/chelsea.png', 'cam1/grass.png', 'cam1/notes.png', 'cam2/chelsea again.png'].sort(),
    );
    expect(file.images).toHaveLength(summary.counts.total);
    expect(headers.get('x-export-rows')).toBe(String(summary.counts.total));
    expect(file.info).toMatchObject({
      format_version: '1.6',
      detector: expect.stringMatching(/^centernet-mobilenetv3-coco80 \S+\+mapping\.\d+$/),
      detection_completion_time: summary.doneAt.replace('T', ' ').slice(0, 19),
      detector_metadata: { typical_detection_threshold: summary.catMinConfidence / 100 },
    });
  });

  it("puts the cat's box in category 1 for both uploads of it, and the other boxed labels after it in lower case", () => {
    const file = JSON.parse(text);
    const entry = (name: string) => file.images.find((i: { file: string }) => i.file === name);

    expect(file.detection_categories['1']).toBe('cat');
    for (const name of ['cam1/chelsea.png', 'cam2/chelsea again.png']) {
      expect(entry(name).detections).toContainEqual({ category: '1', conf: expect.any(Number), bbox: expect.any(Array) });
      expect(entry(name)).toMatchObject({ width: expect.any(Number), height: expect.any(Number) });
    }
    expect(entry('cam2/chelsea again.png').detections).toEqual(entry('cam1/chelsea.png').detections);
    for (const name of Object.values(file.detection_categories) as string[]) expect(name).toBe(name.toLowerCase());
    expect(Object.keys(file.detection_categories)).not.toContain('0');
  });

  it('gives a file that is no image its error code as failure and null detections', () => {
    const notes = JSON.parse(text).images.find((i: { file: string }) => i.file === 'cam1/notes.png');

    expect(notes).toEqual({ file: 'cam1/notes.png', failure: 'NotAnImage', detections: null });
  });

  it('is written by icecat export --format megadetector -o, byte for byte', async () => {
    const out = path.join(work, 'results.json');

    const run = await icecat(['export', batchId, '--format', 'megadetector', '-o', out], client.key);

    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/of megadetector to .*results\.json/);
    expect(readFileSync(out, 'utf8')).toBe(text);
  });

  describe('images reused from this batch in a later one', () => {
    const laterId = uniqueId('md-reuse');
    let later: string;
    let reused: number;

    beforeAll(async () => {
      for (const [name, bytes] of [
        ['again/chelsea.png', fixture('chelsea.png')],
        ['again/astronaut.png', fixture('astronaut.png')],
      ] as const) {
        await uploadFile(`uploads/${client.clientId}/${laterId}/${name}`, bytes);
      }
      await waitForBridgeIdle();
      await call('POST', `/v1/batches/${laterId}:close`, { key: client.key, body: {} });
      reused = (await call('GET', `/v1/batches/${laterId}`, { key: client.key })).body.counts.reused;
      const res = await fetch(new URL(`/v1/batches/${laterId}/export?format=megadetector`, process.env.ICECAT_API_URL), {
        headers: { authorization: `Bearer ${client.key}` },
      });
      later = await res.text();
    }, 120_000);

    /** An entry's detections with each category's name in place of the file's own id (ids are given per file). */
    const named = (fileText: string, name: string) => {
      const file = JSON.parse(fileText);
      const entry = file.images.find((i: { file: string }) => i.file === name);
      return (entry.detections as { category: string }[]).map((d) => ({ ...d, category: file.detection_categories[d.category] }));
    };

    it('carry every box of the original, the other labels (person) as well as the cat', () => {
      expect(reused).toBe(2);
      expect(megadetectorProblems(later)).toEqual([]);
      const person = named(text, 'cam1/astronaut.png');
      // The original has boxes besides cats, or this would prove nothing.
      expect(person.some((d) => d.category !== 'cat')).toBe(true);
      expect(named(later, 'again/astronaut.png')).toEqual(person);
      expect(named(later, 'again/chelsea.png')).toEqual(named(text, 'cam1/chelsea.png'));
    });
  });
});
