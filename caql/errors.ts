/** A problem with the query the user can fix: a 400 with `user_error.message`. */
export class CaqlUserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CaqlUserError';
  }
}

/** The query ran past its `_timeout`. */
export class CaqlTimeoutError extends Error {
  constructor(seconds: number) {
    super(`query exceeded its _timeout of ${seconds} s`);
    this.name = 'CaqlTimeoutError';
  }
}
