/**
 * What a search finds, shared by its backends (`search-engine.ts`, `search-rg.ts`) and the tool.
 */

/** One line of a result: a match or a context line. */
export interface HitLine {
  line: number;
  text: string;
  match: boolean;
}

/** All hits in one file, lines ascending. */
export interface FileHits {
  /** Absolute path. */
  abs: string;
  lines: HitLine[];
  matches: number;
}

/** A finished search. */
export interface SearchOutcome {
  files: FileHits[];
  /** True when the hard match cap stopped the search early. */
  truncated: boolean;
  backend: 'rg' | 'js';
}

/** A search that could not run (bad regex, rg failure, time out). */
export class SearchError extends Error {}
