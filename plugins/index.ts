/**
 * The first-party plugins loaded by default. Channel-specific tools declare the capability they
 * need and are offered only on channels that have it.
 */
import type { Plugin } from '../src/tools/plugin.js';
import { clockPlugin } from './clock/index.js';

/** Every plugin switchboard loads. */
export const plugins: Plugin[] = [clockPlugin];
