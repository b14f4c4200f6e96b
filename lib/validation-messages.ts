// zod's English messages ("Too small: expected number to be >=1"), which zod/mini, unlike zod's chained API, leaves
// out: without them every issue says "Invalid input". Imported by each module that defines schemas.

import { en } from 'zod/locales';
import { config } from 'zod/mini';

config(en());
