// Uses of @tanstack/query-core whose declarations the published build keeps in hashed chunk files:
// Subscribable (subscribable-<hash>.d.ts), Removable (removable-<hash>.d.ts), and the shared hydration chunk.
import { type Query, QueryCache, type QueryClient } from "@tanstack/query-core";

export function watchCache(client: QueryClient): () => void {
  const cache = client.getQueryCache();
  return cache.subscribe((event) => {
    if (event.type === "removed") {
      evict(event.query);
    }
  });
}

export function isWatched(cache: QueryCache): boolean {
  return cache.hasListeners() && cache.getAll().length > 0;
}

export async function refetchAll(cache: QueryCache): Promise<void> {
  for (const query of cache.getAll()) {
    await query.fetch();
  }
}

export function evict(query: Query): number {
  query.destroy();
  return query.gcTime;
}

export function freshCache(): QueryCache {
  return new QueryCache();
}
