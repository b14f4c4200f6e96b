// The model the local detector answers with, recorded as the model answering now when the stack starts
// (docs/decisions/0031-model-versions.md). On AWS the ingest learns a new model from the first answer carrying it; a
// local restart with another model or mapping must not let one reuse slip through before that answer, so the stack asks
// its detector once, before the ingest takes its first upload, and records the answer's model as the ingest would.
import { DetectLabelsCommand, RekognitionClient } from '@aws-sdk/client-rekognition';
import sharp from 'sharp';
import { documentClientOf } from '../../lib/aws/clients';
import type { ModelVersion } from '../../lib/domain/detection';
import { parseModelVersion } from '../../lib/model-version';
import { recordCurrentModel } from '../../lib/store/model/current-write';
import { LOCAL_NAMES } from '../contract';
import { localDynamoClient } from '../dynamodb/dynamodb';

/** One DetectLabels answer of the detector at `rekognitionUrl`: its model, recorded in the table as the one answering now. */
export async function recordDetectorModel(rekognitionUrl: string, dynamodbUrl: string, tableName: string): Promise<ModelVersion> {
  const rekognition = new RekognitionClient({
    endpoint: rekognitionUrl,
    region: LOCAL_NAMES.region,
    credentials: { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: LOCAL_NAMES.secretAccessKey },
  });
  const dynamodb = localDynamoClient(dynamodbUrl);
  try {
    // A small grey square: the answer's labels do not matter, only the model it names.
    const bytes = await sharp({ create: { width: 96, height: 96, channels: 3, background: '#808080' } })
      .jpeg()
      .toBuffer();
    const out = await rekognition.send(new DetectLabelsCommand({ Image: { Bytes: bytes }, MaxLabels: 1 }));
    const model = parseModelVersion(out.LabelModelVersion);
    await recordCurrentModel({ ddb: documentClientOf(dynamodb), tableName }, model, Date.now());
    return model;
  } finally {
    rekognition.destroy();
    dynamodb.destroy();
  }
}
