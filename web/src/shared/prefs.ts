// What a person's browser remembers between visits (localStorage), never
// shared with anyone. Storage may be missing (private mode) or full: then a
// preference lasts as long as the page, and nothing fails.

export function loadPref(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

/** Saves `value` under `key`; null or '' removes it. */
export function savePref(key: string, value: string | null): void {
  try {
    if (value) localStorage.setItem(key, value);
    else localStorage.removeItem(key);
  } catch {
    // No storage: kept for this page only.
  }
}

export function loadJson<T>(key: string, fallback: T): T {
  const v = loadPref(key);
  if (!v) return fallback;
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
}

export function saveJson(key: string, value: unknown): void {
  savePref(key, JSON.stringify(value));
}
