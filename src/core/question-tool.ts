/**
 * `ask_user_clarification`: the model asks the user a question. The engine handles it itself:
 * a question row is stored, the call waits (status `running`) until the user answers with a
 * suggested answer or the next text message, and a newer question supersedes an older one.
 */
import { z } from 'zod';
import { defineTool } from '../tools/define.js';

/** Name of the question tool (the engine intercepts calls to it). */
export const QUESTION_TOOL = 'ask_user_clarification';

/** The tool definition offered to the model. */
export const questionTool = defineTool({
  name: QUESTION_TOOL,
  description: 'Ask the user a question and wait for the answer, with up to 6 short suggested answers.',
  schema: z.object({
    question: z.string().min(1).max(2000),
    suggested_answers: z.array(z.string().min(1).max(100)).max(6).optional(),
  }),
  meta: { category: 'interaction', defaultApproval: 'allow', primaryKey: 'question', subAgent: true, source: 'core' },
  describe: (a) => `ask ${a.question}`,
  async execute() {
    // Reaching this means the engine did not intercept the call: a wiring error, not a model error.
    throw new Error(`${QUESTION_TOOL} is handled by the turn engine and cannot run on its own`);
  },
});
