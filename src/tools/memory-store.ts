/**
 * Saved memories (a person's own, or the shared memory), as the memory tools use them: storage in `src/store/repos/memories.ts`,
 * full-text recall in `src/store/repos/search.ts` (one function for SQLite FTS5 and PostgreSQL
 * tsvector), both re-exported here.
 */
export {
  deleteMemory,
  listMemories,
  SHARED_MEMORY,
  type SaveOutcome,
  saveMemory,
} from '../store/repos/memories.js';
export {
  ftsQuery,
  type HistoryHit,
  type Memory,
  searchHistory,
  searchMemories,
  textQuery,
} from '../store/repos/search.js';
