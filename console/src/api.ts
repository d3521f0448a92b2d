// Requests to the node serving the console (same origin; nothing else is contacted).
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

export async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, `cannot reach the node: ${(error as Error).message}`, null);
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  if (!res.ok) throw new ApiError(res.status, errorMessage(body, res), body);
  return body as T;
}

/** The message of ferrite's `{"error"}` bodies and CAQL's `{"user_error": {"message"}}`. */
function errorMessage(body: unknown, res: Response): string {
  if (typeof body === 'object' && body !== null) {
    const b = body as { error?: unknown; user_error?: { message?: unknown } };
    if (typeof b.error === 'string') return b.error;
    if (typeof b.user_error?.message === 'string') return b.user_error.message;
  }
  return `${res.status} ${res.statusText}`;
}

export const getJson = <T>(path: string, headers: Record<string, string> = {}): Promise<T> => request<T>(path, { headers });

export const postJson = <T>(path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> =>
  request<T>(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

/** A path segment, escaped (metric names hold '|', '[', ' ', ...). */
export const seg = (s: string): string => encodeURIComponent(s);
