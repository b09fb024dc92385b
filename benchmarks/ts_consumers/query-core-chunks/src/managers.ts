import { focusManager, onlineManager } from "@tanstack/query-core";

export function watchFocus(onFocus: () => void): () => void {
  return focusManager.subscribe((focused) => {
    if (focused) {
      onFocus();
    }
  });
}

export function online(): boolean {
  const stop = onlineManager.subscribe(() => {});
  stop();
  return onlineManager.hasListeners() || onlineManager.isOnline();
}
