// Submitted histograms (H1 records, /histogram/write, FlatBuffer) are decoded once at
// ingest, so a malformed one is that record's error and never reaches storage.
import { histogramFromBase64 } from './histogram/index.js';

/** Why a base64 histogram cannot be stored, or null when it can. */
export function histogramProblem(base64: string): string | null {
  try {
    histogramFromBase64(base64);
    return null;
  } catch (error) {
    return `is not a serialized histogram: ${(error as Error).message}`;
  }
}
