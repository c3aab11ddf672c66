/**
 * The first-party plugins loaded by default. Channel-specific tools declare the capability they
 * need and are offered only on channels that have it.
 */
import type { Plugin } from '../src/tools/plugin.js';
import { attachmentsPlugin } from './attachments/index.js';
import { clockPlugin } from './clock/index.js';
import { voicePlugin } from './voice/index.js';

/** Every plugin switchboard loads. */
export const plugins: Plugin[] = [clockPlugin, attachmentsPlugin, voicePlugin];
