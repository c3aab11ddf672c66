// biome-ignore-all lint/suspicious/noExplicitAny: the emulator handles free-form Bot API JSON
/** Request-body decoding for the Telegram emulator: multipart uploads (as grammY sends them) and form fields. */

/** An uploaded file part. */
export interface UploadedPart {
  name: string;
  bytes: Buffer;
}
/** Parse a multipart/form-data body (tolerates grammY's unquoted filenames and header spacing). */
export function parseMultipart(
  body: Buffer,
  boundary: string,
): { fields: Record<string, string>; files: Record<string, UploadedPart> } {
  const fields: Record<string, string> = {};
  const files: Record<string, UploadedPart> = {};
  const delim = Buffer.from(`--${boundary}`);
  let pos = body.indexOf(delim);
  while (pos >= 0) {
    let start = pos + delim.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    if (body.subarray(start, start + 2).toString() === '\r\n') start += 2;
    const next = body.indexOf(delim, start);
    if (next < 0) break;
    const part = body.subarray(start, next - 2); // strip the CRLF before the delimiter
    const headerEnd = part.indexOf('\r\n\r\n');
    const headers = part.subarray(0, headerEnd).toString('utf8');
    const content = part.subarray(headerEnd + 4);
    const name = /name="([^"]*)"/i.exec(headers)?.[1] ?? '';
    const filename = /filename="?([^";\r\n]*)"?/i.exec(headers)?.[1];
    if (filename !== undefined) files[name] = { name: filename, bytes: Buffer.from(content) };
    else fields[name] = content.toString('utf8');
    pos = next;
  }
  return { fields, files };
}

/** Form fields are strings; JSON-looking ones (reply_markup, entities) are decoded. */
export function decodeParams(raw: Record<string, string>): Record<string, any> {
  const out: Record<string, any> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v.startsWith('{') || v.startsWith('[')) {
      try {
        out[k] = JSON.parse(v);
        continue;
      } catch {
        // a text that merely starts with a brace stays a string
      }
    }
    out[k] = v;
  }
  return out;
}
