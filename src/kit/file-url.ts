/**
 * Whether a platform's file link may receive the bot's token. A download sends the token with the
 * request, so it goes only to the platform's own hosts over HTTPS, or to the host of a configured
 * API root (a gateway, a test emulator, which may be plain HTTP); anywhere else would hand the
 * token to a stranger.
 */

/** Where a platform's file links may point. */
export interface FileHosts {
  /** The platform's domain: it and its subdomains are taken over HTTPS (`slack.com`). */
  domain: string;
  /** A configured API root; its host is taken too, over HTTP or HTTPS. */
  apiUrl?: string;
}

/** Whether `url` is a file link of the platform that `hosts` describes (see the module's note). */
export function isPlatformFileUrl(url: string, hosts: FileHosts): boolean {
  const link = URL.canParse(url) ? new URL(url) : null;
  if (!link || (link.protocol !== 'https:' && link.protocol !== 'http:')) return false;
  const { domain, apiUrl } = hosts;
  if (link.protocol === 'https:' && (link.hostname === domain || link.hostname.endsWith(`.${domain}`))) return true;
  return !!apiUrl && URL.canParse(apiUrl) && new URL(apiUrl).host === link.host;
}
