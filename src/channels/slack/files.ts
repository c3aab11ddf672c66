/**
 * Files shared with the bot: downloaded from `url_private` with the bot token into the
 * workspace's `uploads/` folder, refusing anything over the size cap (before and while reading,
 * since `size` is only what Slack claims).
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { safeFileName } from '../../delivery/files.js';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PathPolicy } from '../../tools/path-policy.js';

/** The part of a Slack file object the download needs. */
export interface SlackFileInfo {
  id?: string;
  name?: string;
  title?: string;
  size?: number;
  mimetype?: string;
  url_private?: string;
  url_private_download?: string;
}

/** Outcome of downloading the files of one message. */
export interface DownloadResult {
  /** Workspace-relative paths of the saved files. */
  saved: string[];
  /** One line per file that was refused (too large, not downloadable), for the user. */
  refused: string[];
}

/**
 * Whether a download link may receive the bot token: Slack's own hosts, or the host of a
 * configured `slack.api_url` (a self-hosted gateway or a test emulator). Anything else would hand
 * the token to a stranger, so it is refused.
 */
export function isSlackFileUrl(url: string, apiUrl?: string): boolean {
  let host: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return false;
    host = parsed.host;
    if (parsed.protocol === 'https:' && (parsed.hostname === 'slack.com' || parsed.hostname.endsWith('.slack.com'))) return true;
  } catch {
    return false;
  }
  if (!apiUrl) return false;
  try {
    return new URL(apiUrl).host === host;
  } catch {
    return false;
  }
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MB` : `${Math.ceil(n / 1024)} KB`;
}

class TooLarge extends Error {}

/**
 * Download each file into `<workspace>/uploads/`.
 * @param maxBytes per-file cap (`slack.max_download_bytes`, default 50 MB)
 */
export async function downloadSlackFiles(
  files: SlackFileInfo[],
  options: { token: string; paths: PathPolicy; maxBytes: number; prefix: string; apiUrl?: string; fetchFn?: typeof fetch },
): Promise<DownloadResult> {
  const result: DownloadResult = { saved: [], refused: [] };
  const doFetch = options.fetchFn ?? fetch;
  for (const file of files) {
    const name = file.name ?? file.title ?? file.id ?? 'file';
    const url = file.url_private_download ?? file.url_private;
    if (!url) {
      result.refused.push(`${name}: Slack gave no download link`);
      continue;
    }
    if (!isSlackFileUrl(url, options.apiUrl)) {
      result.refused.push(`${name}: not a Slack file link`);
      continue;
    }
    if (file.size !== undefined && file.size > options.maxBytes) {
      result.refused.push(`${name}: ${formatBytes(file.size)} is over the ${formatBytes(options.maxBytes)} limit`);
      continue;
    }
    const rel = path.join('uploads', `${options.prefix}-${safeFileName(name)}`);
    const resolved = options.paths.resolve(rel, 'write');
    if (!resolved.ok) {
      result.refused.push(`${name}: ${resolved.reason}`);
      continue;
    }
    try {
      const res = await doFetch(url, { headers: { authorization: `Bearer ${options.token}` } });
      // Without the files:read scope Slack answers 200 with its HTML login page.
      if (!res.ok || !res.body || (res.headers.get('content-type') ?? '').startsWith('text/html')) {
        await res.body?.cancel();
        result.refused.push(`${name}: download failed (HTTP ${res.status}; does the app have the files:read scope?)`);
        continue;
      }
      await mkdir(path.dirname(resolved.abs), { recursive: true });
      let seen = 0;
      const limit = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          seen += chunk.length;
          cb(seen > options.maxBytes ? new TooLarge() : null, chunk);
        },
      });
      try {
        await pipeline(Readable.fromWeb(res.body as never), limit, createWriteStream(resolved.abs));
      } catch (err) {
        await rm(resolved.abs, { force: true });
        if (err instanceof TooLarge) {
          result.refused.push(`${name}: over the ${formatBytes(options.maxBytes)} limit`);
          continue;
        }
        throw err;
      }
      result.saved.push(resolved.rel === '.' ? rel : path.relative(options.paths.root, resolved.abs));
    } catch (err) {
      result.refused.push(`${name}: download failed (${(err as Error).message})`);
    }
  }
  return result;
}
