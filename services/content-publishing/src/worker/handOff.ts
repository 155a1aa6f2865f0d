/**
 * How a stage (or the api) hands work on: it adds named jobs to the next stage's queue, each name with the data
 * its contract gives it. A BullMQ queue is one; a stage is given one narrowed to the job names it may add.
 */
export interface JobHandOff<Jobs extends object> {
  add<Name extends keyof Jobs & string>(
    name: Name,
    data: Jobs[Name],
    options?: { jobId?: string; delay?: number },
  ): Promise<unknown>;
}
