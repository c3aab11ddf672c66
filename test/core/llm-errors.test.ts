import { describe, expect, it } from 'vitest';
import { endpointNotFoundText } from '../../src/core/llm.js';

describe('model endpoint errors say what to do', () => {
  it('a 404 without /v1 in the base URL asks about /v1; with it, about the model name', () => {
    expect(endpointNotFoundText('http://127.0.0.1:11434', '404 page not found')).toBe(
      'HTTP 404 from http://127.0.0.1:11434/chat/completions — does the base URL end in /v1? (404 page not found)',
    );
    expect(endpointNotFoundText('http://127.0.0.1:11434/v1/', 'model "llama9" not found')).toBe(
      'HTTP 404 from http://127.0.0.1:11434/v1/chat/completions — is the model name one the server lists (`switchboard doctor` checks)? (model "llama9" not found)',
    );
  });
});
