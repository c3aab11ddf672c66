/**
 * Files shared with the bot: downloaded from `url_private` with the bot token, and only from
 * Slack's own hosts, by the shared size-capped download into the workspace's `uploads/` folder.
 */
import type { IncomingFile } from '../../contract/chat.js';
import { downloadUpload, UploadRefused } from '../../delivery/files.js';
import { UPLOAD } from '../../delivery/notices.js';
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

/** What a download from Slack needs. */
export interface SlackDownloadOptions {
  /** The bot token, sent to Slack's file hosts only. */
  token: string;
  paths: PathPolicy;
  /** `slack.max_download_bytes` (default 50 MB). */
  maxBytes: number;
  /** Put before the saved name: the message's ts. */
  prefix: string;
  /** `slack.api_url`, whose host may receive the token too. */
  apiUrl?: string;
  fetchFn?: typeof fetch;
}

/**
 * A shared file as the core takes it: downloaded from `url_private` with the bot token into the
 * workspace `uploads/` (see `delivery/files.ts`) when the core lets the sender in.
 */
export function slackFile(file: SlackFileInfo, options: SlackDownloadOptions): IncomingFile {
  const name = file.name ?? file.title ?? file.id ?? 'file';
  return {
    name,
    fetch: async () => {
      const url = file.url_private_download ?? file.url_private;
      if (!url) throw new UploadRefused('download_failed', UPLOAD.noLink('Slack'));
      if (!isSlackFileUrl(url, options.apiUrl)) throw new UploadRefused('download_failed', UPLOAD.foreignLink('Slack'));
      return downloadUpload({
        url,
        headers: { authorization: `Bearer ${options.token}` },
        paths: options.paths,
        name,
        maxBytes: options.maxBytes,
        declaredSize: file.size,
        prefix: options.prefix,
        fetchFn: options.fetchFn,
        // Without the files:read scope Slack answers 200 with its HTML login page.
        refuse: (res) => (!res.ok || (res.headers.get('content-type') ?? '').startsWith('text/html') ? UPLOAD.http(res.status, 'does the app have the files:read scope?') : undefined),
      });
    },
  };
}
