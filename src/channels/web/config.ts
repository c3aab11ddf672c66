/**
 * The `[web]` section: the web chat's keys with their documentation. Imports only zod and
 * `config-section.ts` (it sits in the configuration's layer; see `src/config-sections.ts`).
 */
import { z } from 'zod';
import { boolish, configSection, httpUrl, intBetween, positiveInt } from '../../config-section.js';

/** `[web]`: on unless `enabled = false`. */
export const webConfig = configSection({
  name: 'web',
  schema: z.object({
    enabled: boolish.default(true).describe(
      `The web chat and operator console (/admin) on the HTTP server ([http]); with no platform
token it is the default channel. false turns it off.`,
    ),
    public_url: httpUrl
      .optional()
      .describe(
        `The address people open, used in login links (behind a reverse proxy: its https URL).
Unset: http://<http.host>:<port> (0.0.0.0 shown as 127.0.0.1).`,
      )
      .meta({ example: '"https://chat.example.org"' }),
    link_ttl_minutes: intBetween(1, 7 * 24 * 60)
      .default(15)
      .describe('Lifetime of a one-time login link, minutes (`switchboard web link --ttl` overrides it).'),
    session_days: intBetween(1, 365)
      .default(30)
      .describe('Lifetime of a web session, days (`switchboard web revoke` ends one sooner).'),
    max_upload_bytes: positiveInt.default(20 * 1024 * 1024).describe('Largest file a web user may attach, bytes.'),
    stream_interval_ms: intBetween(50, 10_000)
      .default(250)
      .describe('Shortest time between two updates of a streamed answer, ms.'),
  }),
});
