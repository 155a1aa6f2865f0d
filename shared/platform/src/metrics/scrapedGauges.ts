import { Gauge, type Registry } from 'prom-client';

export interface ScrapedGauge<Reading> {
  name: string;
  help: string;
  /** The field of the reading this gauge shows; a reading without it leaves the gauge out of that scrape. */
  field: keyof Reading;
}

/**
 * Gauges whose values come from one read at scrape time (Redis, typically), shared by all of them: a scrape starts
 * every collect in one turn of the event loop, so the read is made once in that turn and forgotten after it. A
 * read that fails or takes over a second leaves the gauges out of that scrape rather than holding /metrics up.
 * Registered once per registry (the first gauge's name decides); later calls leave the existing ones in place.
 */
export function registerScrapedGauges<Reading extends Partial<Record<keyof Reading, number>>>(
  registry: Registry,
  gauges: ScrapedGauge<Reading>[],
  read: () => Promise<Reading | undefined>,
): void {
  if (gauges.length === 0 || registry.getSingleMetric(gauges[0]!.name)) return;
  let reading: Promise<Reading | undefined> | undefined;
  const shared = () => {
    if (!reading) {
      const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 1000).unref());
      reading = Promise.race([read().catch(() => undefined), timeout]);
      setImmediate(() => (reading = undefined));
    }
    return reading;
  };
  for (const { name, help, field } of gauges) {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.reset();
        const value = (await shared())?.[field];
        if (typeof value === 'number') this.set(value);
      },
    });
  }
}
