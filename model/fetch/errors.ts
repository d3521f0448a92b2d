// A fetch document that cannot be served, naming the field to fix (→ 400).
export class FetchRequestError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = 'FetchRequestError';
  }
}
