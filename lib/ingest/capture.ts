// Capture time, camera and place from an image's EXIF block (docs/design.md §12), read by a bounded reader of only the
// tags these need (exif-ifd.ts). Anything missing, garbled, impossible or beyond the reader's caps gives null for that
// field and never fails the upload.
import type { Capture } from '../domain/upload';
import { readExifFields } from './exif-ifd';

const NO_CAPTURE: Capture = { capturedAt: null, camera: null, location: null };

/** Capture times before this are a camera's unset clock (and before digital camera traps). */
const EARLIEST_YEAR = 1990;
/** A capture more than this after the upload is a wrong clock. */
const FUTURE_SLACK_MS = 86_400_000;
const CAMERA_MAX_CHARS = 100;

const pad = (n: number): string => String(n).padStart(2, '0');

/**
 * `YYYY:MM:DD HH:MM:SS`, that wall-clock time taken as UTC (read back the same way by wallClock), or undefined. Date.UTC
 * rolls impossible parts over (February 30th into March, 99:99:99 into days later): the parts are read back from the date
 * made and any that moved refuse the whole.
 */
function exifDate(text: unknown): Date | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^(\d{4}):(\d{2}):(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(text);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const [year, month, day, hours, minutes, seconds] = parts;
  const date = new Date(Date.UTC(year, month - 1, day, hours, minutes, seconds));
  const back = [
    date.getUTCFullYear(),
    date.getUTCMonth() + 1,
    date.getUTCDate(),
    date.getUTCHours(),
    date.getUTCMinutes(),
    date.getUTCSeconds(),
  ];
  return back.every((n, i) => n === parts[i]) ? date : undefined;
}

/** The wall clock of a date made by exifDate. */
const wallClock = (d: Date): string =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

/** `+02:00`, `-05:30`: an offset a camera writes, at most 14 hours (real zones stop at ±14:00), minutes below 60. */
function offsetMinutes(offset: unknown): number | undefined {
  if (typeof offset !== 'string') return undefined;
  const m = /^([+-])(\d{2}):(\d{2})$/.exec(offset.replace(/\0+$/, '').trim());
  if (!m) return undefined;
  const minutes = Number(m[2]) * 60 + Number(m[3]);
  if (minutes > 14 * 60 || Number(m[3]) > 59) return undefined;
  return m[1] === '-' ? -minutes : minutes;
}

function capturedAt(text: unknown, offset: unknown, uploadedAtMs: number): string | null {
  const date = exifDate(text);
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) return null;
  if (date.getUTCFullYear() < EARLIEST_YEAR) return null;
  const minutes = offsetMinutes(offset);
  // The instant the camera meant: exact with an offset; without one, its wall clock is within 14 h of UTC.
  const instant = date.getTime() - (minutes ?? 0) * 60_000;
  if (instant > uploadedAtMs + FUTURE_SLACK_MS) return null;
  if (minutes === undefined) return wallClock(date);
  const sign = minutes < 0 ? '-' : '+';
  return `${wallClock(date)}${sign}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

const clean = (v: unknown): string => (typeof v === 'string' ? v.replace(/\0/g, '').replace(/\s+/g, ' ').trim() : '');

/** `Make Model`, the make once when the model repeats it ("Canon Canon EOS R5" is "Canon EOS R5"). */
function camera(make: unknown, model: unknown): string | null {
  const mk = clean(make);
  const md = clean(model);
  const name = md.toLowerCase().startsWith(mk.toLowerCase()) ? md : `${mk} ${md}`.trim();
  // eslint-disable-next-line no-control-regex
  if (!name || /[\u0000-\u001f\u007f]/.test(name)) return null;
  return name.slice(0, CAMERA_MAX_CHARS);
}

/** Degrees, minutes, seconds (EXIF rationals) and a hemisphere to signed decimal degrees, or undefined. */
function degrees(dms: unknown, ref: unknown, negative: string, limit: number): number | undefined {
  if (!Array.isArray(dms) || dms.length === 0 || dms.length > 3 || !dms.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0))
    return undefined;
  const [d = 0, m = 0, s = 0] = dms as number[];
  if (m >= 60 || s >= 60) return undefined;
  const value = d + m / 60 + s / 3600;
  if (value > limit) return undefined;
  const signed = clean(ref).toUpperCase() === negative ? -value : value;
  return Math.round(signed * 1e6) / 1e6;
}

/** The capture facts of an EXIF block (sharp's metadata().exif), each null when absent or impossible. */
export function readCapture(exif: Buffer | undefined, uploadedAtMs: number): Capture {
  if (!exif || exif.length < 8) return NO_CAPTURE;
  const tags = readExifFields(exif);
  if (!tags) return NO_CAPTURE;
  const original = capturedAt(tags.dateTimeOriginal, tags.offsetTimeOriginal, uploadedAtMs);
  const lat = degrees(tags.gpsLatitude, tags.gpsLatitudeRef, 'S', 90);
  const lon = degrees(tags.gpsLongitude, tags.gpsLongitudeRef, 'W', 180);
  return {
    capturedAt: original ?? capturedAt(tags.dateTimeDigitized, tags.offsetTimeDigitized, uploadedAtMs),
    camera: camera(tags.make, tags.model),
    location: lat === undefined || lon === undefined ? null : { lat, lon },
  };
}
