// Types of cycles.js for the test that runs it (tools/test/cycles.test.ts).

/** Every file loop and folder loop of the project of `tsconfig`, one line each, paths relative to `root`. */
export function importCycles(tsconfig: string, root?: string): string[];
