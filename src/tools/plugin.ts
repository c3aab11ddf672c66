/**
 * Plugins contribute tools. A plugin tool that needs a channel capability (`attachments`,
 * `voice`) declares it in `meta.requires`; the engine offers it only where the channel has it.
 */
import type { Config } from '../config.js';
import type { AnyTool } from './types.js';

/** A first-party or local plugin. */
export interface Plugin {
  name: string;
  /** Tools this plugin contributes under the given configuration. */
  tools(config: Config): AnyTool[];
}
