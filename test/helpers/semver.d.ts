/** The part of `semver` (installed with the dev tools, without its own types) that the tests use. */
declare module 'semver' {
  const semver: {
    minVersion(range: string): { version: string } | null;
    major(version: string): number;
    satisfies(version: string, range: string): boolean;
  };
  export default semver;
}
