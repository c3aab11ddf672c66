/**
 * The smallest first-party plugin: tells the model the current date and time, optionally in a
 * time zone. It proves the plugin seam end to end and is genuinely useful (models do not know
 * what day it is).
 */
import { z } from 'zod';
import { defineTool } from '../../src/tools/define.js';
import type { Plugin } from '../../src/tools/plugin.js';

const currentTime = defineTool({
  name: 'current_time',
  description: 'Current date and time (ISO 8601 and a readable form), optionally in an IANA time zone.',
  schema: z.object({
    timezone: z.string().min(1).optional().describe('IANA time zone such as Europe/Berlin; default UTC'),
  }),
  meta: { category: 'misc', defaultApproval: 'allow', primaryKey: 'timezone', subAgent: true, source: 'plugin:clock' },
  describe: (a) => `current_time ${a.timezone ?? 'UTC'}`,
  async execute(args) {
    const zone = args.timezone ?? 'UTC';
    const now = new Date();
    let readable: string;
    try {
      readable = new Intl.DateTimeFormat('en-GB', { dateStyle: 'full', timeStyle: 'long', timeZone: zone }).format(now);
    } catch {
      return { output: `Unknown time zone "${zone}". Use an IANA name such as Europe/Berlin.`, status: 'failed' };
    }
    return { output: `${readable} (${now.toISOString()} UTC)`, summary: readable };
  },
});

/** The clock plugin. */
export const clockPlugin: Plugin = { name: 'clock', tools: () => [currentTime] };
