/**
 * Files shared with the bot: downloaded from `url_private` with the bot token, from Slack's own
 * hosts only, by the shared size-capped download into the workspace's `uploads/` folder.
 */
import { downloadUpload, isPlatformFileUrl, UploadRefused, UPLOAD } from '../../kit/index.js';
import type { IncomingFile } from '../../kit/index.js';
import type { SlackContext } from './context.js';

/** The part of a Slack file object the download needs. */
export interface SlackFileInfo {
  id?: string;
  name?: string;
  title?: string;
  size?: number;
  url_private?: string;
  url_private_download?: string;
}

/**
 * A shared file as the core takes it: fetched (only when the core lets the sender in) into the
 * conversation's upload folder, its saved name prefixed with `prefix` (the message's ts).
 */
export function slackFile(
  file: SlackFileInfo,
  ctx: Pick<SlackContext, 'config' | 'paths'>,
  prefix: string,
): IncomingFile {
  const name = file.name ?? file.title ?? file.id ?? 'file';
  return {
    name,
    fetch: async (folder) => {
      const url = file.url_private_download ?? file.url_private;
      if (!url) throw new UploadRefused('download_failed', UPLOAD.noLink('Slack'));
      // Only Slack's own hosts, or a configured `slack.api_url`'s, may receive the bot token.
      if (!isPlatformFileUrl(url, { domain: 'slack.com', apiUrl: ctx.config.api_url }))
        throw new UploadRefused('download_failed', UPLOAD.foreignLink('Slack'));
      return downloadUpload({
        url,
        headers: { authorization: `Bearer ${ctx.config.bot_token ?? ''}` },
        paths: ctx.paths,
        folder,
        name,
        maxBytes: ctx.config.max_download_bytes,
        declaredSize: file.size,
        prefix,
        // Without the files:read scope Slack answers 200 with its HTML login page.
        refuse: (res) =>
          !res.ok || (res.headers.get('content-type') ?? '').startsWith('text/html')
            ? UPLOAD.http(res.status, 'does the app have the files:read scope?')
            : undefined,
      });
    },
  };
}
