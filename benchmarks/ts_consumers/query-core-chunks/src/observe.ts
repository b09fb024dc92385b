import { MutationCache, QueryClient, QueryObserver } from "@tanstack/query-core";
import { watchCache } from "./cache";

export function observe(client: QueryClient): number {
  const observer = new QueryObserver(client, { queryKey: ["answer"], queryFn: () => 42 });
  const stop = observer.subscribe(() => {});
  const result = observer.getCurrentResult();
  stop();
  return result.data ?? 0;
}

export function mutations(cache: MutationCache): number {
  const stop = cache.subscribe(() => {});
  for (const mutation of cache.getAll()) {
    mutation.destroy();
  }
  stop();
  return cache.getAll().length;
}

export function client(): QueryClient {
  const c = new QueryClient({ mutationCache: new MutationCache() });
  watchCache(c);
  return c;
}
