import { outboundUrl, type OutboundPolicy } from '@frequency-gateway/platform';
import type { RedisClient } from '@frequency-gateway/platform';
import { z } from 'zod';
import { strictObject } from './strictObject.js';

/**
 * What a webhook can be registered for: the DSNP announcement types by name, and `onChain`, the on-chain
 * messages of watched intents (set with the scanner options).
 */
export const ANNOUNCEMENT_TYPE_NAMES = [
  'tombstone',
  'broadcast',
  'reply',
  'reaction',
  'profile',
  'update',
  'onChain',
] as const;
export type AnnouncementTypeName = (typeof ANNOUNCEMENT_TYPE_NAMES)[number];

const URL_EXAMPLE = { description: 'Where announcements are POSTed', example: 'https://app.example.com/announcements' };

/** A registered URL as a client names it again (to remove it): any http(s) URL, refused destinations included. */
export const webhookUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .max(2048)
  .meta(URL_EXAMPLE);

const announcementTypes = z
  .array(z.enum(ANNOUNCEMENT_TYPE_NAMES))
  .min(1)
  .meta({ description: 'The announcement types to receive' });

/** A registration as a client sends it: its URL must be a destination the outbound policy allows. */
export function webhookRegistration(policy: OutboundPolicy) {
  return strictObject({ url: outboundUrl(policy).meta(URL_EXAMPLE), announcementTypes }).meta({
    id: 'WebhookRegistrationDto',
  });
}

export type WebhookRegistration = z.infer<ReturnType<typeof webhookRegistration>>;

/**
 * The registered webhooks: one Redis set of URLs per announcement type, so registrations from any number of api
 * replicas at once all land (no read-modify-write of a shared document).
 */
export class WebhookRegistry {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(type: AnnouncementTypeName): string {
    return `${this.prefix}:webhooks:${type}`;
  }

  /** Adds the URL to each type (a URL already there stays once). */
  async register(registration: WebhookRegistration): Promise<void> {
    const multi = this.redis.multi();
    for (const type of new Set(registration.announcementTypes)) multi.sadd(this.key(type), registration.url);
    await multi.exec();
  }

  /** Every registered URL with the types it receives, URLs in order. */
  async list(): Promise<WebhookRegistration[]> {
    const byUrl = new Map<string, AnnouncementTypeName[]>();
    const sets = await Promise.all(ANNOUNCEMENT_TYPE_NAMES.map((type) => this.redis.smembers(this.key(type))));
    ANNOUNCEMENT_TYPE_NAMES.forEach((type, position) => {
      for (const url of sets[position] ?? []) byUrl.set(url, [...(byUrl.get(url) ?? []), type]);
    });
    return [...byUrl.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([url, announcementTypes]) => ({ url, announcementTypes }));
  }

  /** Removes one URL from every type, or every registration when no URL is given. */
  async clear(url?: string): Promise<void> {
    const multi = this.redis.multi();
    for (const type of ANNOUNCEMENT_TYPE_NAMES) {
      if (url === undefined) multi.del(this.key(type));
      else multi.srem(this.key(type), url);
    }
    await multi.exec();
  }

  /** The URLs registered for one type. */
  async urlsFor(type: AnnouncementTypeName): Promise<string[]> {
    return (await this.redis.smembers(this.key(type))).sort();
  }

  /** Whether any webhook is registered at all. */
  async any(): Promise<boolean> {
    const counts = await Promise.all(ANNOUNCEMENT_TYPE_NAMES.map((type) => this.redis.scard(this.key(type))));
    return counts.some((count) => count > 0);
  }
}
