/**
 * What the core is built with by default: the built-in tools, the first-party plugins, the system
 * prompt sections, the shutdown hooks and the registered channel kinds. `main.ts` and the test
 * harness both use it, so tests exercise exactly what users run.
 */
import type { Logger } from 'pino';
import { plugins } from '../plugins/index.js';
import { channelKinds } from './channels/registry.js';
import type { ChannelKind } from './kit/kind.js';
import type { Config } from './config.js';
import type { CoreService } from './core/core.js';
import { JobService } from './jobs/service.js';
import type { ToolSource } from './tools/source.js';
import { builtinTools, promptSections, shutdownBackgroundProcesses } from './tools/builtins/index.js';
import type { Plugin } from './tools/plugin.js';
import type { AnyTool, PromptSection } from './tools/types.js';

/** The parts of `CoreOptions` that make up the default toolset. */
export interface Toolset {
  tools: AnyTool[];
  plugins: Plugin[];
  promptSections: PromptSection[];
  onClose: Array<() => Promise<void>>;
  /** Services living with the core: the job scheduler (which also adds the job and notify tools). */
  services: CoreService[];
  /** Every registered channel kind, for access decisions (see `core/access.ts`). */
  channelKinds: readonly ChannelKind[];
}

/** The default toolset for a configuration. */
export function defaultToolset(config: Config): Toolset {
  return {
    tools: builtinTools(config),
    plugins,
    promptSections: [...promptSections],
    onClose: [shutdownBackgroundProcesses],
    services: [new JobService()],
    channelKinds,
  };
}

/** The configured MCP servers as tool sources; the MCP SDK is loaded only when one is enabled. */
export async function mcpSources(config: Config, log: Logger): Promise<ToolSource[]> {
  if (!Object.values(config.mcp.servers).some((s) => s.enabled)) return [];
  const { mcpSourcesFor } = await import('./mcp/index.js');
  return mcpSourcesFor(config, log.child({ part: 'mcp' }));
}
