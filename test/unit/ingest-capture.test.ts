import sharp from 'sharp';
import { readCapture } from '../../lib/ingest/capture';
import { type ExifReadStats, MAX_ENTRIES, readExifFields } from '../../lib/ingest/exif-ifd';
import { fingerprint } from '../../lib/ingest/fingerprint';
import { type ExifSpec, exifBombBlock, exifBombJpeg, photoWithExif } from '../helpers/exif-images';

const UPLOADED = Date.UTC(2024, 6, 1);

async function exifOf(spec: ExifSpec): Promise<Buffer | undefined> {
  return (await fingerprint(await photoWithExif(spec), { maxInputPixels: 1e8 })).exif;
}

const captureOf = async (spec: ExifSpec) => readCapture(await exifOf(spec), UPLOADED);

describe('readCapture', () => {
  it('reads the capture time with its offset, the camera and the place', async () => {
    const capture = await captureOf({
      make: 'Reconyx',
      model: 'HC600 HyperFire',
      dateTimeOriginal: '2024:06:01 06:30:00',
      offsetTimeOriginal: '+02:00',
      lat: [47, 30, 0, 'N'],
      lon: [122, 15, 30, 'W'],
    });

    expect(capture).toEqual({
      capturedAt: '2024-06-01T06:30:00+02:00',
      camera: 'Reconyx HC600 HyperFire',
      location: { lat: 47.5, lon: -122.258333 },
    });
  });

  it("keeps the camera's wall clock without a zone when it wrote no offset", async () => {
    expect((await captureOf({ dateTimeOriginal: '2024:06:01 23:59:58' })).capturedAt).toBe('2024-06-01T23:59:58');
  });

  it('falls back to CreateDate', async () => {
    expect((await captureOf({ createDate: '2023:12:31 05:00:00' })).capturedAt).toBe('2023-12-31T05:00:00');
  });

  it('writes the make once when the model repeats it', async () => {
    expect((await captureOf({ make: 'Canon', model: 'Canon EOS R5' })).camera).toBe('Canon EOS R5');
  });

  it.each([
    ['an unset clock', '0000:00:00 00:00:00'],
    ['a date before 1990', '1985:05:05 10:00:00'],
    ['a date more than a day after the upload', '2024:07:03 00:00:00'],
    ['text that is no date', 'yesterday at dawn'],
  ])('gives no capture time for %s', async (_, date) => {
    expect((await captureOf({ dateTimeOriginal: date, make: 'Bushnell' })).capturedAt).toBeNull();
  });

  it('gives no place for a latitude beyond 90 degrees', async () => {
    expect((await captureOf({ lat: [95, 0, 0, 'N'], lon: [10, 0, 0, 'E'] })).location).toBeNull();
  });

  it('gives nulls for an image without EXIF', async () => {
    const png = await sharp({ create: { width: 90, height: 90, channels: 3, background: '#123456' } })
      .png()
      .toBuffer();

    expect(readCapture((await fingerprint(png, { maxInputPixels: 1e8 })).exif, UPLOADED)).toEqual({
      capturedAt: null,
      camera: null,
      location: null,
    });
  });

  it('gives nulls, never an error, for garbage', () => {
    const garbage = Buffer.concat([Buffer.from('Exif\0\0II*\0'), Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37) % 256))]);

    expect(readCapture(garbage, UPLOADED)).toEqual({ capturedAt: null, camera: null, location: null });
    expect(readCapture(Buffer.from('not exif at all'), UPLOADED)).toEqual({ capturedAt: null, camera: null, location: null });
  });

  it('reads what it can of a truncated block, never an error', async () => {
    const exif = (await exifOf({ make: 'Reconyx', dateTimeOriginal: '2024:06:01 06:30:00', lat: [1, 0, 0, 'N'], lon: [1, 0, 0, 'E'] }))!;

    for (let length = 8; length < exif.length; length += 7) expect(() => readCapture(exif.subarray(0, length), UPLOADED)).not.toThrow();
    expect(readCapture(exif.subarray(0, 40), UPLOADED).capturedAt).toBeNull();
  });

  it('never fails on a block that lies about its size (entry counts and offsets past its end)', async () => {
    const exif = Buffer.from((await exifOf({ make: 'Reconyx', dateTimeOriginal: '2024:06:01 06:30:00' }))!);
    // IFD0's entry count (after "Exif\0\0" and the 8-byte TIFF header) and its first value offset, made huge.
    exif.writeUInt16LE(0xffff, 14);
    exif.writeUInt32LE(0xfffffff0, 14 + 2 + 8);

    expect(() => readCapture(exif, UPLOADED)).not.toThrow();
  });

  it('reads a photo with a 60 KB maker note, and the ingest fingerprints it', async () => {
    const jpeg = await photoWithExif({ make: 'Browning', dateTimeOriginal: '2024:05:05 05:05:05', makerNoteBytes: 60_000 });
    const image = await fingerprint(jpeg, { maxInputPixels: 1e8 });

    expect(image.exif!.length).toBeGreaterThan(60_008);
    expect(readCapture(image.exif, UPLOADED)).toMatchObject({ capturedAt: '2024-05-05T05:05:05', camera: 'Browning' });
  });

  it('gives nulls for the EXIF bomb (5,450 entries of count 0xFFFFFFFF in an IFD every pointer leads back to), and the ingest fingerprints it', async () => {
    const image = await fingerprint(await exifBombJpeg(), { maxInputPixels: 1e8 });

    expect(image.exif?.length).toBeGreaterThan(65_000);
    expect(readCapture(image.exif, UPLOADED)).toEqual({ capturedAt: null, camera: null, location: null });
  });

  it('reads none of the EXIF bomb: one IFD beyond the entries any camera writes is refused before its first entry', () => {
    const stats: ExifReadStats = { ifds: 0, entries: 0 };

    expect(readExifFields(exifBombBlock(), stats)).toBeUndefined();
    expect(stats).toEqual({ ifds: 1, entries: 0 });
  });

  it('visits each IFD once: a bomb small enough to be read follows no pointer back into an IFD it read', () => {
    const stats: ExifReadStats = { ifds: 0, entries: 0 };

    expect(readExifFields(exifBombBlock(MAX_ENTRIES - 3), stats)).toBeUndefined();
    expect(stats).toEqual({ ifds: 1, entries: MAX_ENTRIES });
  });
});
