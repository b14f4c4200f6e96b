// A batch's export (GET …/export): the format asked for.
import * as z from 'zod/mini';
import { EXPORT_FORMATS } from '../../export/encode';

export const exportQuerySchema = z.strictObject({
  format: z._default(z.enum(EXPORT_FORMATS), 'csv').check(
    z.meta({
      description:
        'csv (RFC 4180, with a header), jsonl (JSON Lines), or megadetector: a MegaDetector results file, format 1.6 ' +
        '(lila.science/megadetector-output-format), as Timelapse and AddaxAI read it.',
    }),
  ),
});
