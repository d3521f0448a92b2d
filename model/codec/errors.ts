/** A block could not be decoded: truncated or corrupted bytes. Carries where it failed. */
export class BlockFormatError extends Error {
  constructor(
    readonly offset: number,
    reason: string,
  ) {
    super(`corrupt block at byte ${offset}: ${reason}`);
    this.name = 'BlockFormatError';
  }
}
