import { createHash } from 'node:crypto';
import { readBatch } from '@frequency-gateway/dsnp';
import { shownUrl, UnrecoverableError, type Job, type Logger } from '@frequency-gateway/platform';
import type { ContentStore } from '@frequency-gateway/storage';
import type { Delivery, WebhookDelivery } from '@frequency-gateway/webhooks';
import { Counter, type Registry } from 'prom-client';
import { announcementOf, TYPE_NAMES, type AnnouncementPayload } from '../announcements.js';
import { batchJobId, type BatchJob } from '../jobs.js';
import type { AnnouncementTypeName, WebhookRegistry } from '../registrations.js';
import type { ScannerControl } from '../scannerControl.js';
import type { OnChainDecoder } from './onChain.js';

export interface BatchReaderOptions {
  store: ContentStore;
  registry: WebhookRegistry;
  control: ScannerControl;
  delivery: WebhookDelivery;
  onChain: OnChainDecoder;
  /** Longest wait for one batch file. */
  readTimeoutMs: number;
  logger: Logger;
  metrics: Registry;
}

/** Deliveries stored in one round trip. */
const DELIVERY_CHUNK = 1000;

const urlKey = (url: string) => createHash('sha256').update(url).digest('base64url').slice(0, 16);

/**
 * Reads the batch file of a message found on chain and hands each announcement to the webhooks that want it,
 * as durable deliveries whose ids are the announcement's place and the URL: a batch read twice delivers
 * nothing twice. A file IPFS cannot give yet fails the job, which is retried with backoff (never dropped); a
 * file that is no DSNP batch is refused for good.
 */
export class BatchReader {
  private readonly announcements: Counter<'type'>;

  constructor(private readonly options: BatchReaderOptions) {
    this.announcements = new Counter({
      name: 'watcher_announcements_total',
      help: 'Announcements read from batch files, by type',
      labelNames: ['type'],
      registers: [options.metrics],
    });
  }

  async process(job: Job<BatchJob>): Promise<{ rows: number; deliveries: number }> {
    const batch = job.data;
    // Nothing registered and no search waiting: nothing to read.
    if (!batch.search && !(await this.options.registry.any())) return { rows: 0, deliveries: 0 };
    const dsnpIds = batch.search?.dsnpIds ?? (await this.options.control.options())?.dsnpIds;
    const urlsFor = this.targets(batch);
    const place = batchJobId(batch);
    const envelope = {
      blockNumber: batch.blockNumber,
      schemaId: batch.schemaId,
      intentId: batch.intentId,
      // The receiver's own URL, its credentials masked: the body is kept on the job, which the queue board shows.
      ...(batch.search ? { requestId: batch.search.requestId, webhookUrl: shownUrl(batch.search.webhookUrl) } : {}),
    };
    // Deliveries are stored as they are made, a chunk at a time: a large file is never held as deliveries whole.
    let pending: Delivery[] = [];
    let delivered = 0;
    const deliver = async (delivery: Delivery) => {
      pending.push(delivery);
      delivered++;
      if (pending.length >= DELIVERY_CHUNK) await flush();
    };
    const flush = async () => {
      const chunk = pending;
      pending = [];
      await this.options.delivery.enqueueMany(chunk);
    };
    let rows = 0;
    if (batch.cid) {
      const records = await this.read(batch.cid);
      rows = records.length;
      for (const [row, record] of records.entries()) {
        const announcement = announcementOf(record);
        if (!announcement) continue;
        const type = TYPE_NAMES[announcement.announcementType];
        this.announcements.inc({ type });
        if (dsnpIds && !dsnpIds.includes(announcement.fromId)) continue;
        const body: AnnouncementPayload = { ...envelope, announcement };
        for (const url of await urlsFor(type))
          await deliver({ id: `${place}-${row}-${urlKey(url)}`, url, event: `${type} ${row}`, body });
      }
    } else if (batch.payload && !(dsnpIds && !dsnpIds.includes(batch.msaId))) {
      rows = 1;
      const decoded = await this.options.onChain.decode(batch.schemaId, batch.payload);
      const message = {
        msaId: batch.msaId,
        providerId: batch.providerId,
        payload: batch.payload,
        ...(decoded === undefined ? {} : { decoded }),
      };
      const body: AnnouncementPayload = { ...envelope, message };
      for (const url of await urlsFor('onChain'))
        await deliver({ id: `${place}-onchain-${urlKey(url)}`, url, event: 'onChain message', body });
    }
    await flush();
    this.options.logger.info(
      { jobId: job.id, cid: batch.cid, block: batch.blockNumber, rows, deliveries: delivered },
      'message read',
    );
    return { rows, deliveries: delivered };
  }

  /** Where a message's announcements go: the search's webhook, or the URLs registered for their type. */
  private targets(batch: BatchJob): (type: AnnouncementTypeName) => Promise<string[]> {
    const search = batch.search;
    if (search) return async () => [search.webhookUrl];
    const known = new Map<AnnouncementTypeName, Promise<string[]>>();
    return (type) => {
      let urls = known.get(type);
      if (!urls) {
        urls = this.options.registry.urlsFor(type);
        known.set(type, urls);
      }
      return urls;
    };
  }

  private async read(cid: string): Promise<Record<string, unknown>[]> {
    const signal = AbortSignal.timeout(this.options.readTimeoutMs);
    const chunks: Uint8Array[] = [];
    for await (const chunk of this.options.store.read(cid, { signal })) chunks.push(chunk);
    try {
      return await readBatch(Buffer.concat(chunks));
    } catch (error) {
      throw new UnrecoverableError(`${cid} is not a DSNP batch file: ${(error as Error).message}`);
    }
  }
}
