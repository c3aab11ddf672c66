/**
 * Undoing a response's Content-Encoding, for HTTP clients that do not (`node:http`, undici's
 * `request`): the model client's fetch and `web_fetch`.
 */
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

/**
 * The body with its content-encoding (gzip, deflate, br) undone; an error of the body ends the
 * decoded stream with that error, and the body ends with the decoded stream. No encoding,
 * `identity` or one not known: the body as it is.
 */
export function decodedBody(body: Readable, encoding: string | undefined): Readable {
  const enc = encoding?.trim().toLowerCase();
  const decoder =
    enc === 'gzip' || enc === 'x-gzip'
      ? zlib.createGunzip()
      : enc === 'deflate'
        ? zlib.createInflate()
        : enc === 'br'
          ? zlib.createBrotliDecompress()
          : null;
  if (!decoder) return body;
  body.on('error', (err) => decoder.destroy(err));
  // A reader that stops early destroys the decoder: the body (and its connection) goes with it.
  decoder.once('close', () => {
    if (!body.readableEnded) body.destroy();
  });
  return body.pipe(decoder);
}
