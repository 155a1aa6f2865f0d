/**
 * A point a piece of work stops at until the test releases it: the way a test holds one run of a job at a chosen
 * boundary (a stalled worker) while another run of the same job goes on.
 */
export interface Hold {
  /** Resolves once the work reached the boundary. */
  readonly reached: Promise<void>;
  /** Lets the held work go on. */
  release(): void;
  /** Called by the work at each boundary it passes: waits here at the held one. */
  at(boundary: string): Promise<void>;
}

/** A hold at `boundary`: the work waits there (once) until `release`. */
export function holdAt(boundary: string): Hold {
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  let passed = false;
  return {
    reached,
    release,
    at: async (point) => {
      if (point !== boundary || passed) return;
      passed = true;
      reach();
      await released;
    },
  };
}

/**
 * `target` with one method held: the work stops at `boundaries.before` before calling it and at
 * `boundaries.after` once it returned (the method itself runs as it is). Without a hold, `target` as it is.
 */
export function holding<T extends object, K extends keyof T & string>(
  target: T,
  method: K,
  hold: Hold | undefined,
  boundaries: { before?: string; after?: string },
): T {
  if (!hold) return target;
  const original = target[method] as (...args: unknown[]) => Promise<unknown>;
  const held = async (...args: unknown[]) => {
    if (boundaries.before) await hold.at(boundaries.before);
    const result = await original.apply(target, args);
    if (boundaries.after) await hold.at(boundaries.after);
    return result;
  };
  return Object.assign(Object.create(target) as T, { [method]: held });
}

/** Where a run of a job that signs a transaction can stall: the boundaries the overlap tests hold it at. */
export const SIGNING_BOUNDARIES = ['before recording', 'after recording', 'after submitting'] as const;
