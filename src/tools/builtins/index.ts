/**
 * The built-in tool catalog. `ask_user_clarification` is not here: the core owns it.
 */
import type { Config } from '../../config.js';
import { shutdownBackgroundProcesses as stopBackground } from '../background.js';
import { stopMath } from '../math-runner.js';
import type { AnyTool, PromptSection } from '../types.js';
import { bashTool } from './bash.js';
import { bashProcessesTool } from './bash-processes.js';
import { editFileTool } from './edit-file.js';
import { listFilesTool } from './list-files.js';
import { manTool } from './man.js';
import { mathTool } from './math.js';
import { forgetTool, recallTool, rememberTool } from './memory.js';
import { memoriesSection } from './memory-section.js';
import { readFileTool } from './read-file.js';
import { scratchpadSection, updateScratchpadTool } from './scratchpad.js';
import { searchTool } from './search.js';
import { writeTodosTool } from './todos.js';
import { webFetchTool } from './web-fetch.js';
import { webSearchTool } from './web-search.js';
import { writeFileTool } from './write-file.js';
import { writePatchTool } from './write-patch.js';

/**
 * Every built-in tool this configuration can run. A tool that cannot work is not offered:
 * `web_search` only when a backend is configured (`tools.web_search.backend` other than `none`).
 */
export function builtinTools(config: Config): AnyTool[] {
  return [
    readFileTool,
    writeFileTool,
    editFileTool,
    writePatchTool,
    listFilesTool,
    searchTool,
    bashTool,
    bashProcessesTool,
    webFetchTool,
    ...(config.tools.web_search.backend === 'none' ? [] : [webSearchTool]),
    mathTool,
    manTool,
    rememberTool,
    recallTool,
    forgetTool,
    writeTodosTool,
    updateScratchpadTool,
  ];
}

/** System-prompt sections of the built-ins: saved memories, then the conversation scratchpad. */
export const promptSections: PromptSection[] = [memoriesSection, scratchpadSection];

/** Kill every background process group and the math worker; the core calls this on close. */
export async function shutdownBackgroundProcesses(): Promise<void> {
  await Promise.all([stopBackground(), stopMath()]);
}
