// The local detector's confidence scale: Confidence is the model's uncalibrated score x 100, so its
// thresholds are its own, not Rekognition's (80 for a cat there). Measured on the fixtures and skimage's
// other sample photos (local/detector/README.md): a cat photo 52, the same cat greyscale 25, rotated a
// quarter turn 28, at 120 px 28; the best "Cat" on 32 non-cat images 14.
/** CAT_MIN_CONFIDENCE for the local stack. */
export const LOCAL_CAT_MIN_CONFIDENCE = 20;
/** REKOGNITION_MIN_CONFIDENCE for the local stack: a little below the cat threshold, so near misses are recorded. */
export const LOCAL_REKOGNITION_MIN_CONFIDENCE = 15;
