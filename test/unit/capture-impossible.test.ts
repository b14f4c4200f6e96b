// Impossible EXIF dates and offsets (issue 37 item 8): a calendar date that does not exist, a clock past 23:59:59,
// or an offset beyond ±14:00 is never rolled into a capture time (Date.UTC would carry 2021:02:30 into March).
import { readCapture } from '../../lib/ingest/capture';
import { fingerprint } from '../../lib/ingest/fingerprint';
import { type ExifSpec, photoWithExif } from '../helpers/exif-images';

const UPLOADED = Date.UTC(2024, 6, 1);

const captureOf = async (spec: ExifSpec) =>
  readCapture((await fingerprint(await photoWithExif(spec), { maxInputPixels: 1e8 })).exif, UPLOADED);

describe('readCapture refuses what no clock shows', () => {
  it.each([
    ['February 30th', '2021:02:30 12:00:00'],
    ['February 29th of a common year', '2023:02:29 12:00:00'],
    ['month 13', '2021:13:01 12:00:00'],
    ['month 0', '2021:00:10 12:00:00'],
    ['day 0', '2021:05:00 12:00:00'],
    ['day 32', '2021:01:32 12:00:00'],
    ['the clock 99:99:99', '2021:05:05 99:99:99'],
    ['hour 24', '2021:05:05 24:00:00'],
    ['minute 60', '2021:05:05 10:60:00'],
    ['second 60', '2021:05:05 10:00:60'],
  ])('gives no capture time for %s', async (_, date) => {
    expect((await captureOf({ dateTimeOriginal: date })).capturedAt).toBeNull();
  });

  it('keeps a leap day of a leap year', async () => {
    expect((await captureOf({ dateTimeOriginal: '2024:02:29 23:59:59' })).capturedAt).toBe('2024-02-29T23:59:59');
  });

  it.each([
    ['+14:59', '+14:59'],
    ['-14:30', '-14:30'],
    ['+15:00', '+15:00'],
    ['+02:60', '+02:60'],
  ])('keeps no offset beyond ±14:00 (%s): the wall clock alone, as for a garbled one', async (_, offset) => {
    expect((await captureOf({ dateTimeOriginal: '2024:06:01 06:30:00', offsetTimeOriginal: offset })).capturedAt).toBe(
      '2024-06-01T06:30:00',
    );
  });

  it.each([
    ['+14:00', '2024-06-01T06:30:00+14:00'],
    ['-12:00', '2024-06-01T06:30:00-12:00'],
    ['+05:45', '2024-06-01T06:30:00+05:45'],
  ])('keeps a real offset (%s)', async (offset, expected) => {
    expect((await captureOf({ dateTimeOriginal: '2024:06:01 06:30:00', offsetTimeOriginal: offset })).capturedAt).toBe(expected);
  });

  it('falls back to CreateDate when DateTimeOriginal is impossible', async () => {
    expect((await captureOf({ dateTimeOriginal: '2021:02:30 12:00:00', createDate: '2021:02:28 12:00:00' })).capturedAt).toBe(
      '2021-02-28T12:00:00',
    );
  });
});
