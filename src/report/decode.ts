/**
 * Decoding the merged histograms stored in results.json.
 */

import { decodeFromCompressedBase64, type Histogram } from 'hdr-histogram-js';

/**
 * Decode one `merged[stage].histogram`. `where` names it in the error (e.g.
 * `point 0, strategy "wq", stage one_way`). Decodes into a plain-JS histogram with 64-bit counts
 * (no WebAssembly to initialise; a merged histogram's bucket may exceed 2^31).
 */
export function decodeHistogram(base64: string, where: string): Histogram {
  try {
    return decodeFromCompressedBase64(base64, 64, false);
  } catch (e) {
    throw new Error(
      `results: the histogram of ${where} is not an hdr-histogram-js compressed base64 string ` +
        `(${(e as Error).message}); results.json is damaged: re-run to regenerate it`,
    );
  }
}
