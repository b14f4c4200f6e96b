// DetectLabels' request as Rekognition checks it, and the body it comes in.
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { DetectorError, DetectorParameterError } from './errors';

// Rekognition's request constraints (API reference, DetectLabels and GeneralLabelsSettings).
const FilterList = z.array(z.string().max(50)).max(100);
const DetectLabelsRequest = z.object({
  Image: z
    .object({
      Bytes: z.string().optional(),
      S3Object: z
        .object({
          Bucket: z
            .string()
            .min(3)
            .max(255)
            .regex(/^[0-9A-Za-z.\-_]*$/),
          Name: z.string().min(1).max(1024),
          Version: z.string().min(1).max(1024).optional(),
        })
        .optional(),
    })
    .refine((img) => (img.Bytes === undefined) !== (img.S3Object === undefined), {
      message: 'exactly one of Image.Bytes and Image.S3Object',
    }),
  MaxLabels: z.number().int().min(0).optional(),
  MinConfidence: z.number().min(0).max(100).optional(),
  Features: z
    .array(z.enum(['GENERAL_LABELS', 'IMAGE_PROPERTIES']))
    .max(2)
    .optional(),
  Settings: z
    .object({
      GeneralLabels: z
        .object({
          LabelInclusionFilters: FilterList.optional(),
          LabelExclusionFilters: FilterList.optional(),
          LabelCategoryInclusionFilters: FilterList.optional(),
          LabelCategoryExclusionFilters: FilterList.optional(),
        })
        .optional(),
      ImageProperties: z.object({ MaxDominantColors: z.number().int().min(0).max(12).optional() }).optional(),
    })
    .optional(),
});
export type DetectLabelsRequest = z.infer<typeof DetectLabelsRequest>;

/** The body, or null when it exceeds `limit` (the rest is still read so the client sees the answer). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  return size <= limit ? Buffer.concat(chunks) : null;
}

function toInvalidParameter(error: z.ZodError): DetectorParameterError {
  const detail = error.issues.map((i) => `${i.path.join('.') || 'request'}: ${i.message}`).join('; ');
  return new DetectorParameterError(`Request has invalid parameters (${detail})`);
}

/** The request, checked; its body's text and the parsed JSON are garbage once this returns. */
export function parseRequest(body: Buffer): DetectLabelsRequest {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8') || '{}');
  } catch {
    throw new DetectorError('Request body is not valid JSON', { type: 'SerializationException' });
  }
  const parsed = DetectLabelsRequest.safeParse(json);
  if (!parsed.success) throw toInvalidParameter(parsed.error);
  return parsed.data;
}
