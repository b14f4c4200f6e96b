// A local detector as the detector's own tests and the benches start one: its settings from the environment with the
// test's overrides on top (local/detector/from-environment.ts), and an S3 client, to a port nobody listens on when the
// test sends only Image.Bytes.
import type { S3Client } from '@aws-sdk/client-s3';
import { detectorSettingsFromEnvironment } from '../../local/detector/from-environment';
import { type DetectorServer, type DetectorServerOptions, startDetectorServer } from '../../local/detector/server';
import type { DetectorSettings } from '../../local/detector/settings';
import { localS3Client } from '../../local/s3/s3';

type Overrides = Partial<Omit<DetectorSettings, 'modelCache'>>;

/** An S3 nobody answers: a detector whose tests send Image.Bytes only. */
export const noS3 = (): S3Client => localS3Client('http://127.0.0.1:9', { maxAttempts: 1 });

export function startTestDetector(
  overrides: Overrides = {},
  opts: Partial<Omit<DetectorServerOptions, 'settings'>> = {},
): Promise<DetectorServer> {
  return startDetectorServer({ port: 0, s3: opts.s3 ?? noS3(), ...opts, settings: detectorSettingsFromEnvironment(overrides) });
}
