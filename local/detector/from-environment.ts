// A detector configured from the environment alone: what `npm run detector` starts (main.ts), its edge. The settings
// (settings.ts) and the S3 client that reads Image.S3Object (AWS_ENDPOINT_URL_S3, path-style when S3_FORCE_PATH_STYLE
// is true) are read here once and handed to the server.
import { createS3Client } from '../../lib/aws/clients';
import { loadAwsClientSettings } from '../../lib/config';
import { detectorEnvironment } from '../config';
import { type DetectorServer, startDetectorServer } from './server';
import { type DetectorSettings, defaultDetectorWorkers, detectorSettings, MAX_DETECTOR_WORKERS } from './settings';

/** The detector's settings as the environment says, with the overrides on top (a test's or a bench's). */
export const detectorSettingsFromEnvironment = (overrides: Partial<Omit<DetectorSettings, 'modelCache'>> = {}): DetectorSettings =>
  detectorSettings(detectorEnvironment(defaultDetectorWorkers(), MAX_DETECTOR_WORKERS), overrides);

export async function startDetectorFromEnvironment(at: { host?: string; port?: number }): Promise<DetectorServer> {
  return startDetectorServer({ ...at, settings: detectorSettingsFromEnvironment(), s3: createS3Client(loadAwsClientSettings()) });
}
